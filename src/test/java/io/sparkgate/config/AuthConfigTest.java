package io.sparkgate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class AuthConfigTest {
  @TempDir Path dir;
  private static final String BASE =
      "listen:\n  plaintext: true\n  address: 127.0.0.1\nbackend:\n  address: localhost:15002\n";
  private static final String KEYS =
      "    jwks_file: jwks.json\n    issuer: https://idp\n    audience: spark\n";

  private Path write(String auth) throws IOException {
    Files.writeString(dir.resolve("jwks.json"), "{\"keys\":[]}");
    Files.writeString(dir.resolve("hmac.key"), "x".repeat(40));
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(file, BASE + auth);
    return file;
  }

  private String error(String auth) throws IOException {
    Path file = write(auth);
    return assertThrows(ConfigException.class, () -> ProxyConfig.load(file)).getMessage();
  }

  @Test
  void absent_refused_namingTheKeyAndTheWayOut() throws IOException {
    assertEquals(
        dir.resolve("sparkgate.yaml")
            + ":1: auth: is required: configure jwt, static_tokens or client_cert (proxy/sparkgate.yaml"
            + " shows each), or say auth: {anonymous: true} to accept every caller as user 'anonymous'",
        error(""));
  }

  @Test
  void anonymousAlone_isTheExplicitOptIn() throws IOException {
    AuthConfig auth = ProxyConfig.load(write("auth: {anonymous: true}\n")).auth();
    assertTrue(auth.enabled());
    assertEquals(List.of(AuthConfig.Method.ANONYMOUS), auth.methods());
    assertTrue(auth.secretPatterns().contains(AuthConfig.SPARK_TOKEN_KEY));
  }

  @Test
  void anonymousTrue_besideAnotherMethod_refused_fallbackIsTheExplicitSpelling()
      throws IOException {
    String tokens = "  static_tokens:\n    - sha256: " + "a".repeat(64) + "\n      principal: a\n";
    String refused = error("auth:\n  jwt:\n" + KEYS + tokens + "  anonymous: true\n");
    assertTrue(refused.contains("auth.anonymous: is true beside [jwt, static_tokens]"), refused);
    assertTrue(refused.contains("write anonymous: fallback"), refused);

    AuthConfig fallback =
        ProxyConfig.load(write("auth:\n  jwt:\n" + KEYS + "  anonymous: fallback\n")).auth();
    assertEquals(List.of(AuthConfig.Method.JWT, AuthConfig.Method.ANONYMOUS), fallback.methods());
    assertTrue(fallback.anonymousFallback());
    assertFalse(ProxyConfig.load(write("auth: {anonymous: true}\n")).auth().anonymousFallback());
    assertFalse(ProxyConfig.load(write("auth:\n  jwt:\n" + KEYS)).auth().anonymousFallback());
    assertFalse(
        ProxyConfig.load(write("auth:\n  jwt:\n" + KEYS + "  anonymous: false\n"))
            .auth()
            .anonymousFallback());

    String alone = error("auth: {anonymous: fallback}\n");
    assertTrue(alone.contains("no other method is configured to fall back from"), alone);
    String other = error("auth: {anonymous: maybe}\n");
    assertTrue(other.contains("auth.anonymous: must be true, false or fallback"), other);
  }

  @Test
  void jwt_defaults() throws IOException {
    AuthConfig auth = ProxyConfig.load(write("auth:\n  jwt:\n" + KEYS)).auth();
    AuthConfig.Jwt jwt = auth.jwt().orElseThrow();
    assertEquals(List.of(AuthConfig.Method.JWT), auth.methods());
    assertEquals(Duration.ofSeconds(60), jwt.clockSkew());
    assertEquals("sub", jwt.principalClaim());
    assertEquals(List.of("spark"), jwt.audience());
    assertTrue(jwt.algorithms().contains("RS256"));
    assertFalse(jwt.algorithms().contains("HS256"));
    assertEquals(AuthConfig.UserIdMismatch.OVERWRITE, auth.userIdMismatch());
  }

  @Test
  void examplePlaceholders_refusedByKey_untilReplaced() throws IOException {
    String example =
        "auth:\n  jwt:\n    jwks_url: https://REPLACE-ME.example.com/certs\n"
            + "    issuer: https://REPLACE-ME.example.com/realms/spark\n    audience: [REPLACE-ME]\n";
    assertEquals(
        dir.resolve("sparkgate.yaml")
            + ":8: auth.jwt.jwks_url: still the placeholder REPLACE-ME from the example: set your"
            + " IdP's jwks_url (docs/authentication.md)",
        error(example));
    assertTrue(
        error(example.replace("REPLACE-ME.example.com/certs", "idp.example.com/certs"))
            .contains(
                ":9: auth.jwt.issuer: still the placeholder REPLACE-ME from the example: set your"
                    + " IdP's issuer"),
        example);
    assertTrue(
        error(example.replace("REPLACE-ME.example.com", "idp.example.com"))
            .contains(":10: auth.jwt.audience[0]: still the placeholder REPLACE-ME"));
    // Either spelling, any case, anywhere in the section.
    assertTrue(
        error("auth:\n  static_tokens:\n    - {sha256: replace_me, principal: etl}\n")
            .contains("auth.static_tokens[0].sha256: still the placeholder REPLACE-ME"));
    AuthConfig auth =
        ProxyConfig.load(write(example.replace("REPLACE-ME", "idp").replace("[idp]", "spark")))
            .auth();
    assertEquals("https://idp.example.com/realms/spark", auth.jwt().orElseThrow().issuer());
  }

  @Test
  void present_butNoMethod_refused() throws IOException {
    assertTrue(error("auth:\n  user_id_mismatch: reject\n").contains("auth: enables no method"));
  }

  @Test
  void jwt_unsafeCombinations_refused() throws IOException {
    assertTrue(
        error("auth:\n  jwt:\n" + KEYS + "    algorithms: [none]\n")
            .contains("auth.jwt.algorithms: 'none' is never accepted"));
    assertTrue(
        error("auth:\n  jwt:\n" + KEYS + "    algorithms: [RS256, HS256]\n")
            .contains("auth.jwt.algorithms: 'HS256'"));
    assertTrue(
        error("auth:\n  jwt:\n" + KEYS + "    hmac_secret_file: hmac.key\n")
            .contains("auth.jwt.hmac_secret_file: cannot be combined"));
    assertTrue(
        error("auth:\n  jwt:\n    jwks_url: http://idp/jwks\n    issuer: i\n    audience: a\n")
            .contains("must be an https:// URL"));
    assertTrue(
        error("auth:\n  jwt:\n    jwks_file: jwks.json\n    audience: a\n")
            .contains("auth.jwt.issuer: is required"));
    assertTrue(
        error("auth:\n  jwt:\n    jwks_file: jwks.json\n    issuer: i\n")
            .contains("auth.jwt.audience: is required"));
  }

  @Test
  void staticTokens_mustBeHashes() throws IOException {
    assertTrue(
        error("auth:\n  static_tokens:\n    - sha256: my-plain-token\n      principal: a\n")
            .contains("auth.static_tokens[0].sha256: must be 64 hex digits"));
  }

  @Test
  void methods_orderValidated() throws IOException {
    String tokens = "  static_tokens:\n    - sha256: " + "a".repeat(64) + "\n      principal: a\n";
    AuthConfig auth =
        ProxyConfig.load(
                write("auth:\n  jwt:\n" + KEYS + tokens + "  methods: [static_tokens, jwt]\n"))
            .auth();
    assertEquals(List.of(AuthConfig.Method.STATIC_TOKENS, AuthConfig.Method.JWT), auth.methods());
    assertTrue(
        error("auth:\n  jwt:\n" + KEYS + "  methods: [jwt, anonymous]\n")
            .contains("'anonymous' is not a configured method"));
  }

  @Test
  void clientCert_needsClientCa() throws IOException {
    assertTrue(
        error("auth:\n  client_cert: {}\n").contains("auth.client_cert: needs tls.client_ca_file"));
  }

  @Test
  void userContextExtensions_defaultKeepsThePipelineContext_andValidates() throws IOException {
    AuthConfig auth = ProxyConfig.load(write("auth:\n  anonymous: true\n")).auth();
    assertEquals(
        java.util.Set.of("type.googleapis.com/spark.connect.PipelineAnalysisContext"),
        auth.userContextExtensions().allow());
    assertFalse(auth.userContextExtensions().refuseOthers());
    assertEquals(
        "type.googleapis.com/"
            + io.sparkgate.proto.spark.PipelineAnalysisContext.getDescriptor().getFullName(),
        AuthConfig.UserContextExtensions.PIPELINE_ANALYSIS_CONTEXT);

    AuthConfig set =
        ProxyConfig.load(
                write(
                    "auth:\n  anonymous: true\n  user_context_extensions:\n"
                        + "    allow: []\n    others: refuse\n"))
            .auth();
    assertEquals(java.util.Set.of(), set.userContextExtensions().allow());
    assertTrue(set.userContextExtensions().refuseOthers());

    assertTrue(
        error("auth:\n  anonymous: true\n  user_context_extensions:\n    others: keep\n")
            .contains("must be strip or refuse"));
    assertTrue(
        error(
                "auth:\n  anonymous: true\n  user_context_extensions:\n    allow: [PipelineAnalysisContext]\n")
            .contains("is not a type URL"));
  }
}
