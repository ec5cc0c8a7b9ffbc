package io.sparkgate.auth;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionView;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ConfigResponse;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.KeyValue;
import io.sparkgate.proto.spark.Plan;
import java.util.Set;

/**
 * Keeps secrets in the server's configuration (above all {@code spark.connect.authenticate.token}, the
 * backend's own credential) from reaching clients: Config RPC reads have their values redacted, and a
 * SQL {@code SET <secret key>} read is refused before it runs, wherever it sits in the statement (SQL is
 * read with Spark's grammar by the inspector), and so are the listings {@code SET} and {@code SET -v}: Spark
 * redacts those only with its own {@code spark.redaction.regex}, which does not know our patterns.
 */
final class SecretRedaction implements CallHook.Factory {
  private static final Set<ConfigRequest.Operation.OpTypeCase> READS =
      Set.of(
          ConfigRequest.Operation.OpTypeCase.GET,
          ConfigRequest.Operation.OpTypeCase.GET_ALL,
          ConfigRequest.Operation.OpTypeCase.GET_OPTION,
          ConfigRequest.Operation.OpTypeCase.GET_WITH_DEFAULT);
  private final Inspector inspector = new Inspector();
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
        if (pair.hasValue() && secrets.isSecret(pair.getKey()) && !pair.getValue().equals(SecretPatterns.REDACTED)) {
          builder.setPairs(i, pair.toBuilder().setValue(SecretPatterns.REDACTED));
          changed = true;
        }
      }
      // Untouched responses go out exactly as the server sent them.
      return changed ? Payload.of(builder.build().toByteArray()) : message;
    }
  }

  private void refuseSecretSet(byte[] message) throws StatusException {
    String sql;
    try {
      sql = ExecutePlanSql.of(message);
    } catch (ExecutePlanSql.NotCanonical e) {
      try {
        sql = parsedSql(ExecutePlanRequest.parseFrom(message));
      } catch (InvalidProtocolBufferException invalid) {
        return; // not ours to judge: the server answers malformed requests itself
      }
    }
    if (sql == null || !mayReadSettings(sql)) {
      return;
    }
    for (Fact read : inspector.inspectSql(sql, SessionView.DEFAULT).ofKind(Fact.Kind.CONFIG_READ)) {
      String key = read.get("key");
      if ("*".equals(key)) {
        throw Status.PERMISSION_DENIED
            .withDescription("listing all settings (SET, SET -v) is not allowed through Sparkgate: "
                + "read the settings you need by name, e.g. spark.conf.get(\"spark.sql.shuffle.partitions\")")
            .asException();
      }
      if (secrets.isSecret(key)) {
        throw Status.PERMISSION_DENIED
            .withDescription("reading the secret setting " + JwtVerifier.printable(key) + " is not allowed")
            .asException();
      }
    }
  }

  /**
   * The request's SQL as the server will see it, from the parsed request: for encodings {@link ExecutePlanSql}
   * does not read (and, in tests, as its reference).
   */
  // SqlCommand.sql is deprecated but still what 3.5 clients send: it must be checked all the same.
  @SuppressWarnings("deprecation")
  static String parsedSql(ExecutePlanRequest request) {
    Plan plan = request.getPlan();
    if (plan.hasRoot() && plan.getRoot().hasSql()) {
      return plan.getRoot().getSql().getQuery();
    }
    if (plan.hasCommand() && plan.getCommand().hasSqlCommand()) {
      var command = plan.getCommand().getSqlCommand();
      return command.hasInput() && command.getInput().hasSql() ? command.getInput().getSql().getQuery() : command.getSql();
    }
    return null;
  }

  /**
   * Whether {@code sql} may read a setting, without parsing it: a read is a SET keyword, in the text or in
   * an EXECUTE IMMEDIATE string (whose escapes can spell SET without the letters), and {@code ${...}} may
   * substitute any text before Spark parses. Spark's lexer upper-cases every character first (so "ſet" is
   * SET), and so does this check. Most statements contain none of the three and are spared a parse here.
   */
  static boolean mayReadSettings(String sql) {
    StringBuilder upper = new StringBuilder(sql.length());
    // As the lexer reads it; a loop rather than a stream, which was most of this check's cost on a short text.
    for (int i = 0; i < sql.length(); ) {
      int c = sql.codePointAt(i);
      upper.appendCodePoint(Character.toUpperCase(c));
      i += Character.charCount(c);
    }
    return upper.indexOf("SET") >= 0 || upper.indexOf("IMMEDIATE") >= 0 || upper.indexOf("${") >= 0;
  }
}
