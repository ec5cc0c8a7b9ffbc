package io.sparkgate.redact;

import com.google.protobuf.InvalidProtocolBufferException;
import io.sparkgate.call.Call;
import io.sparkgate.call.Stage;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.proto.spark.ConfigResponse;
import io.sparkgate.proto.spark.KeyValue;

/**
 * The redact stage: keeps secrets in the server's configuration (above all {@code
 * spark.connect.authenticate.token}, the backend's own credential) from reaching clients through the Config
 * RPC. The values of secret keys in the answers to reads (as the call's head names the operation) are
 * redacted. Reading them with SQL ({@code SET <key>}, {@code SET}, {@code SET -v}) is for the policy to refuse,
 * over the inspector's CONFIG_READ facts.
 */
public final class ConfigRedaction implements Stage {
  private final SecretPatterns secrets;

  public ConfigRedaction(SecretPatterns secrets) {
    this.secrets = secrets;
  }

  @Override
  public CallHook open(Call call) {
    return "Config".equals(call.method()) ? new ConfigHook(call) : CallHook.PASS_THROUGH;
  }

  /**
   * Redacts the answer to a read; the head was read from the request before any answer can arrive. A request
   * the head could not read is redacted too: the server refuses it, and should it answer anyway, nothing
   * secret leaves.
   */
  private final class ConfigHook implements CallHook {
    private final Call call;

    ConfigHook(Call call) {
      this.call = call;
    }

    @Override
    public Payload onResponse(Payload message) {
      if (call.head().readable() && !call.head().readsConfig()) {
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
