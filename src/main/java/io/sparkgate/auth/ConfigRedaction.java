package io.sparkgate.auth;

import com.google.protobuf.InvalidProtocolBufferException;
import io.sparkgate.call.Call;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ConfigResponse;
import io.sparkgate.proto.spark.KeyValue;
import java.util.Set;

/**
 * Keeps secrets in the server's configuration (above all {@code spark.connect.authenticate.token}, the
 * backend's own credential) from reaching clients through the Config RPC: the values of secret keys in the
 * answers to reads are redacted. Reading them with SQL ({@code SET <key>}, {@code SET}, {@code SET -v}) is for
 * the policy to refuse, over the inspector's CONFIG_READ facts.
 */
final class ConfigRedaction {
  private static final Set<ConfigRequest.Operation.OpTypeCase> READS =
      Set.of(
          ConfigRequest.Operation.OpTypeCase.GET,
          ConfigRequest.Operation.OpTypeCase.GET_ALL,
          ConfigRequest.Operation.OpTypeCase.GET_OPTION,
          ConfigRequest.Operation.OpTypeCase.GET_WITH_DEFAULT);
  private final SecretPatterns secrets;

  ConfigRedaction(SecretPatterns secrets) {
    this.secrets = secrets;
  }

  CallHook open(Call call) {
    return "Config".equals(call.method()) ? new ConfigHook() : CallHook.PASS_THROUGH;
  }

  /** Request first (unary), then the response: the response is redacted when the request was a read. */
  private final class ConfigHook implements CallHook {
    private volatile boolean read;

    @Override
    public byte[] onRequest(byte[] message) {
      try {
        read = READS.contains(ConfigRequest.parseFrom(message).getOperation().getOpTypeCase());
      } catch (InvalidProtocolBufferException e) {
        read = true; // the server will reject it; should it answer anyway, redact
      }
      return message;
    }

    @Override
    public Payload onResponse(Payload message) {
      if (!read) {
        return message;
      }
      ConfigResponse response;
      try {
        response = ConfigResponse.parseFrom(message.bytes());
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalStateException("the server sent a ConfigResponse that does not parse", e);
      }
      ConfigResponse.Builder builder = response.toBuilder();
      boolean changed = false;
      for (int i = 0; i < builder.getPairsCount(); i++) {
        KeyValue pair = builder.getPairs(i);
        if (pair.hasValue()
            && secrets.isSecret(pair.getKey())
            && !pair.getValue().equals(SecretPatterns.REDACTED)) {
          builder.setPairs(i, pair.toBuilder().setValue(SecretPatterns.REDACTED));
          changed = true;
        }
      }
      // Untouched responses go out exactly as the server sent them.
      return changed ? Payload.of(builder.build().toByteArray()) : message;
    }
  }
}
