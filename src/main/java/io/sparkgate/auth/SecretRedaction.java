package io.sparkgate.auth;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.forward.CallHook;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ConfigResponse;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.KeyValue;
import io.sparkgate.proto.spark.Plan;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps secrets in the server's configuration (above all {@code spark.connect.authenticate.token}, the
 * backend's own credential) from reaching clients: Config RPC reads have their values redacted, and a
 * bare {@code SET <secret key>} SQL statement is refused before it runs.
 *
 * <p>Known gap, left to the plan-inspection work: SQL reaching the server in other shapes (a SET inside a
 * multi-statement script, behind comments, in a compressed plan, or {@code SET} / {@code SET -v} listings,
 * which Spark redacts only with its own {@code spark.redaction.regex}) is not examined here; this class
 * deliberately does not parse SQL.
 */
final class SecretRedaction implements CallHook.Factory {
  private static final Set<ConfigRequest.Operation.OpTypeCase> READS =
      Set.of(
          ConfigRequest.Operation.OpTypeCase.GET,
          ConfigRequest.Operation.OpTypeCase.GET_ALL,
          ConfigRequest.Operation.OpTypeCase.GET_OPTION,
          ConfigRequest.Operation.OpTypeCase.GET_WITH_DEFAULT);
  /** {@code SET key} with no value: reads one conf. Keys in backquotes are unwrapped. */
  private static final Pattern SET_READ = Pattern.compile("(?is)\\s*SET\\s+`?([^\\s=;`]+)`?\\s*;?\\s*");

  private final SecretPatterns secrets;

  SecretRedaction(SecretPatterns secrets) {
    this.secrets = secrets;
  }

  @Override
  public CallHook newCall(MethodDescriptor<?, ?> method, Metadata headers) {
    return switch (method.getBareMethodName() == null ? "" : method.getBareMethodName()) {
      case "Config" -> new ConfigHook();
      case "ExecutePlan" -> new CallHook() {
        @Override
        public byte[] onRequest(byte[] message) throws StatusException {
          refuseSecretSet(message);
          return message;
        }
      };
      default -> CallHook.PASS_THROUGH;
    };
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
    public byte[] onResponse(byte[] message) {
      if (!read) {
        return message;
      }
      ConfigResponse response;
      try {
        response = ConfigResponse.parseFrom(message);
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalStateException("the server sent a ConfigResponse that does not parse", e);
      }
      ConfigResponse.Builder builder = response.toBuilder();
      boolean changed = false;
      for (int i = 0; i < builder.getPairsCount(); i++) {
        KeyValue pair = builder.getPairs(i);
        if (pair.hasValue() && secrets.isSecret(pair.getKey()) && !pair.getValue().equals(SecretPatterns.REDACTED)) {
          builder.setPairs(i, pair.toBuilder().setValue(SecretPatterns.REDACTED));
          changed = true;
        }
      }
      // Untouched responses go out exactly as the server sent them.
      return changed ? builder.build().toByteArray() : message;
    }
  }

  // SqlCommand.sql is deprecated but still what 3.5 clients send: it must be checked all the same.
  @SuppressWarnings("deprecation")
  private void refuseSecretSet(byte[] message) throws StatusException {
    Plan plan;
    try {
      plan = ExecutePlanRequest.parseFrom(message).getPlan();
    } catch (InvalidProtocolBufferException e) {
      return; // not ours to judge: the server answers malformed requests itself
    }
    String sql = null;
    if (plan.hasRoot() && plan.getRoot().hasSql()) {
      sql = plan.getRoot().getSql().getQuery();
    } else if (plan.hasCommand() && plan.getCommand().hasSqlCommand()) {
      var command = plan.getCommand().getSqlCommand();
      sql = command.hasInput() && command.getInput().hasSql() ? command.getInput().getSql().getQuery() : command.getSql();
    }
    if (sql == null) {
      return;
    }
    Matcher m = SET_READ.matcher(sql);
    if (m.matches() && !m.group(1).equals("-v") && secrets.isSecret(m.group(1))) {
      throw Status.PERMISSION_DENIED
          .withDescription("reading the secret setting " + JwtVerifier.printable(m.group(1)) + " is not allowed")
          .asException();
    }
  }
}
