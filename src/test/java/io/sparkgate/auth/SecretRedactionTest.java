package io.sparkgate.auth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.Command;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ConfigResponse;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.KeyValue;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.SqlCommand;
import org.junit.jupiter.api.Test;

final class SecretRedactionTest {
  private final SecretRedaction redaction = new SecretRedaction(new SecretPatterns(AuthConfig.disabled().secretPatterns()));

  static MethodDescriptor<byte[], byte[]> method(String name, MethodDescriptor.MethodType type) {
    MethodDescriptor.Marshaller<byte[]> bytes = TestMethods.BYTES;
    return MethodDescriptor.newBuilder(bytes, bytes).setFullMethodName("spark.connect.SparkConnectService/" + name)
        .setType(type).build();
  }

  private CallHook configCall(ConfigRequest.Operation op) throws Exception {
    CallHook hook = redaction.newCall(method("Config", MethodDescriptor.MethodType.UNARY), new Metadata());
    hook.onRequest(ConfigRequest.newBuilder().setOperation(op).build().toByteArray());
    return hook;
  }

  private static KeyValue kv(String k, String v) {
    return KeyValue.newBuilder().setKey(k).setValue(v).build();
  }

  @Test
  void patterns_defaults() {
    SecretPatterns p = new SecretPatterns(AuthConfig.disabled().secretPatterns());
    for (String key : new String[] {"spark.connect.authenticate.token", "spark.hadoop.fs.s3a.access.key",
        "fs.s3a.bucket.b1.secret.key", "spark.sql.catalog.x.PASSWORD", "my.credentials.file", "a.secret"}) {
      assertTrue(p.isSecret(key), key);
    }
    for (String key : new String[] {"spark.sql.shuffle.partitions", "spark.app.name", "fs.s3a.endpoint"}) {
      assertFalse(p.isSecret(key), key);
    }
  }

  @Test
  void config_getAll_secretsRedacted() throws Exception {
    CallHook hook = configCall(ConfigRequest.Operation.newBuilder()
        .setGetAll(ConfigRequest.GetAll.newBuilder()).build());
    ConfigResponse response = ConfigResponse.newBuilder().setSessionId("s")
        .addPairs(kv("spark.connect.authenticate.token", "backend-secret"))
        .addPairs(kv("spark.sql.shuffle.partitions", "200"))
        .addPairs(kv("spark.hadoop.fs.s3a.secret.key", "AKIA..."))
        .build();
    ConfigResponse out = ConfigResponse.parseFrom(hook.onResponse(Payload.of(response.toByteArray())).bytes());
    assertEquals(SecretPatterns.REDACTED, out.getPairs(0).getValue());
    assertEquals("200", out.getPairs(1).getValue());
    assertEquals(SecretPatterns.REDACTED, out.getPairs(2).getValue());
    assertEquals("s", out.getSessionId());
  }

  @Test
  void config_getGetOptionGetWithDefault_redacted() throws Exception {
    for (ConfigRequest.Operation op : new ConfigRequest.Operation[] {
        ConfigRequest.Operation.newBuilder().setGet(ConfigRequest.Get.newBuilder().addKeys("x.password")).build(),
        ConfigRequest.Operation.newBuilder().setGetOption(ConfigRequest.GetOption.newBuilder().addKeys("x.password")).build(),
        ConfigRequest.Operation.newBuilder().setGetWithDefault(ConfigRequest.GetWithDefault.newBuilder()
            .addPairs(kv("x.password", "d"))).build()}) {
      CallHook hook = configCall(op);
      byte[] response = ConfigResponse.newBuilder().addPairs(kv("x.password", "hunter2")).build().toByteArray();
      assertEquals(SecretPatterns.REDACTED, ConfigResponse.parseFrom(hook.onResponse(Payload.of(response)).bytes()).getPairs(0).getValue(),
          op.getOpTypeCase().name());
    }
  }

  @Test
  void config_isModifiable_andCleanResponses_untouched() throws Exception {
    CallHook hook = configCall(ConfigRequest.Operation.newBuilder()
        .setIsModifiable(ConfigRequest.IsModifiable.newBuilder().addKeys("x.password")).build());
    byte[] response = ConfigResponse.newBuilder().addPairs(kv("x.password", "true")).build().toByteArray();
    assertArrayEquals(response, hook.onResponse(Payload.of(response)).bytes());
    CallHook get = configCall(ConfigRequest.Operation.newBuilder().setGet(ConfigRequest.Get.newBuilder()).build());
    byte[] clean = ConfigResponse.newBuilder().addPairs(kv("spark.app.name", "x")).build().toByteArray();
    assertArrayEquals(clean, get.onResponse(Payload.of(clean)).bytes());
  }

  private void execute(Plan plan) throws StatusException {
    redaction.newCall(method("ExecutePlan", MethodDescriptor.MethodType.SERVER_STREAMING), new Metadata())
        .onRequest(ExecutePlanRequest.newBuilder().setPlan(plan).build().toByteArray());
  }

  private static Plan sql(String query) {
    return Plan.newBuilder().setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery(query))).build();
  }

  @Test
  void sqlSet_readingSecret_refused() {
    for (Plan plan : new Plan[] {sql("SET spark.connect.authenticate.token"), sql("  set `my.db.password` ;"),
        sql("/* comment */ SET my.api.credential"), sql("SET"), sql("set -v"),
        // Spark's lexer upper-cases each character: the long s (U+017F) is an S to it.
        sql("\u017Fet my.db.password"),
        sql("EXECUTE IMMEDIATE '\\u0053ET my.db.password'"),
        Plan.newBuilder().setCommand(Command.newBuilder().setSqlCommand(SqlCommand.newBuilder()
            .setInput(Relation.newBuilder().setSql(SQL.newBuilder().setQuery("SET fs.s3a.secret.key"))))).build()}) {
      StatusException e = assertThrows(StatusException.class, () -> execute(plan));
      assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    }
  }

  @Test
  void sqlSet_otherStatements_pass() throws Exception {
    execute(sql("SET spark.sql.shuffle.partitions"));
    execute(sql("SET my.db.password=changeit"));
    execute(sql("SELECT 'SET x.password'"));
  }

  @Test
  void textWithoutSetImmediateOrSubstitution_isNotParsed() {
    assertFalse(SecretRedaction.mayReadSettings("SELECT a, count(*) FROM t GROUP BY a"));
    assertTrue(SecretRedaction.mayReadSettings("select * from t offset 5")); // a false alarm costs a parse
    assertTrue(SecretRedaction.mayReadSettings("\u017Fet x"));
    assertTrue(SecretRedaction.mayReadSettings("execute immediate 'x'"));
    assertTrue(SecretRedaction.mayReadSettings("SELECT ${v}"));
  }
}
