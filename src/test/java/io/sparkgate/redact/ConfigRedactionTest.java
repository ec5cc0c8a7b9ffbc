package io.sparkgate.redact;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.call.Call;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.inspect.RequestHead;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ConfigResponse;
import io.sparkgate.proto.spark.KeyValue;
import org.junit.jupiter.api.Test;

/** Config answers to reads lose the values of secret settings; everything else passes as the server sent it. */
final class ConfigRedactionTest {
  private final ConfigRedaction redaction =
      new ConfigRedaction(new SecretPatterns(AuthConfig.disabled().secretPatterns()));

  /** A Config call whose head the head stage read from {@code op}'s request. */
  private CallHook configCall(ConfigRequest.Operation op) throws Exception {
    Call call = Call.of("Config");
    call.head(
        RequestHead.read(
            "Config", ConfigRequest.newBuilder().setOperation(op).build().toByteArray()));
    return redaction.open(call);
  }

  private static KeyValue kv(String k, String v) {
    return KeyValue.newBuilder().setKey(k).setValue(v).build();
  }

  @Test
  void patterns_defaults() {
    SecretPatterns p = new SecretPatterns(AuthConfig.disabled().secretPatterns());
    for (String key :
        new String[] {
          "spark.connect.authenticate.token",
          "spark.hadoop.fs.s3a.access.key",
          "fs.s3a.bucket.b1.secret.key",
          "spark.sql.catalog.x.PASSWORD",
          "my.credentials.file",
          "a.secret"
        }) {
      assertTrue(p.isSecret(key), key);
    }
    for (String key :
        new String[] {"spark.sql.shuffle.partitions", "spark.app.name", "fs.s3a.endpoint"}) {
      assertFalse(p.isSecret(key), key);
    }
  }

  @Test
  void config_getAll_secretsRedacted() throws Exception {
    CallHook hook =
        configCall(
            ConfigRequest.Operation.newBuilder()
                .setGetAll(ConfigRequest.GetAll.newBuilder())
                .build());
    ConfigResponse response =
        ConfigResponse.newBuilder()
            .setSessionId("s")
            .addPairs(kv("spark.connect.authenticate.token", "backend-secret"))
            .addPairs(kv("spark.sql.shuffle.partitions", "200"))
            .addPairs(kv("spark.hadoop.fs.s3a.secret.key", "AKIA..."))
            .build();
    ConfigResponse out =
        ConfigResponse.parseFrom(hook.onResponse(Payload.of(response.toByteArray())).bytes());
    assertEquals(SecretPatterns.REDACTED, out.getPairs(0).getValue());
    assertEquals("200", out.getPairs(1).getValue());
    assertEquals(SecretPatterns.REDACTED, out.getPairs(2).getValue());
    assertEquals("s", out.getSessionId());
  }

  @Test
  void config_getGetOptionGetWithDefault_redacted() throws Exception {
    for (ConfigRequest.Operation op :
        new ConfigRequest.Operation[] {
          ConfigRequest.Operation.newBuilder()
              .setGet(ConfigRequest.Get.newBuilder().addKeys("x.password"))
              .build(),
          ConfigRequest.Operation.newBuilder()
              .setGetOption(ConfigRequest.GetOption.newBuilder().addKeys("x.password"))
              .build(),
          ConfigRequest.Operation.newBuilder()
              .setGetWithDefault(
                  ConfigRequest.GetWithDefault.newBuilder().addPairs(kv("x.password", "d")))
              .build()
        }) {
      CallHook hook = configCall(op);
      byte[] response =
          ConfigResponse.newBuilder().addPairs(kv("x.password", "hunter2")).build().toByteArray();
      assertEquals(
          SecretPatterns.REDACTED,
          ConfigResponse.parseFrom(hook.onResponse(Payload.of(response)).bytes())
              .getPairs(0)
              .getValue(),
          op.getOpTypeCase().name());
    }
  }

  @Test
  void config_isModifiable_andCleanResponses_untouched() throws Exception {
    CallHook hook =
        configCall(
            ConfigRequest.Operation.newBuilder()
                .setIsModifiable(ConfigRequest.IsModifiable.newBuilder().addKeys("x.password"))
                .build());
    byte[] response =
        ConfigResponse.newBuilder().addPairs(kv("x.password", "true")).build().toByteArray();
    assertArrayEquals(response, hook.onResponse(Payload.of(response)).bytes());
    CallHook get =
        configCall(
            ConfigRequest.Operation.newBuilder().setGet(ConfigRequest.Get.newBuilder()).build());
    byte[] clean =
        ConfigResponse.newBuilder().addPairs(kv("spark.app.name", "x")).build().toByteArray();
    assertArrayEquals(clean, get.onResponse(Payload.of(clean)).bytes());
  }
}
