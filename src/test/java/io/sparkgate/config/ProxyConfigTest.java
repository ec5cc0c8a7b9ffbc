package io.sparkgate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class ProxyConfigTest {
  @TempDir Path dir;

  private Path write(String yaml) throws IOException {
    Files.writeString(dir.resolve("server.pem"), "cert");
    Files.writeString(dir.resolve("server.key"), "key");
    Files.setPosixFilePermissions(
        dir.resolve("server.key"), PosixFilePermissions.fromString("rw-------"));
    Path file = dir.resolve("sparkgate.yaml");
    // At the end, so that the lines the messages name stay those of the text written here.
    boolean sections = !yaml.isBlank() && !yaml.startsWith("-") && !yaml.contains("[1, 2");
    Files.writeString(
        file, yaml.contains("auth:") || !sections ? yaml : yaml + "\nauth: {anonymous: true}\n");
    return file;
  }

  private String error(String yaml) throws IOException {
    Path file = write(yaml);
    return assertThrows(ConfigException.class, () -> ProxyConfig.load(file)).getMessage();
  }

  /** Where an error about line {@code line} of the written file starts. */
  private String at(int line) {
    return dir.resolve("sparkgate.yaml") + ":" + line + ": ";
  }

  private static final boolean ROOT = "root".equals(System.getProperty("user.name"));
  private static final String TLS = "tls:\n  cert_file: server.pem\n  key_file: server.key\n";
  private static final String BACKEND = "backend:\n  address: localhost:15002\n";

  @Test
  void minimal_defaults() throws IOException {
    ProxyConfig config = ProxyConfig.load(write(TLS + BACKEND));
    assertEquals("0.0.0.0", config.listen().address());
    assertEquals(15003, config.listen().port());
    assertFalse(config.listen().plaintext());
    assertEquals(128L * 1024 * 1024, config.listen().maxInboundMessageBytes());
    assertEquals(Runtime.getRuntime().availableProcessors(), config.listen().eventLoops());
    assertEquals(java.time.Duration.ZERO, config.listen().eventLoopSpin());
    assertEquals(dir.resolve("server.pem"), config.tls().orElseThrow().certFile());
    assertTrue(config.tls().orElseThrow().clientCaFile().isEmpty());
    assertEquals("localhost", config.firstBackend().host());
    assertEquals(15002, config.firstBackend().port());
    assertTrue(config.firstBackend().token().isEmpty());
  }

  @Test
  void shippedDefaultFile_refusesItsPlaceholders_andIsValidOnceTheyAreReplaced()
      throws IOException {
    Path proxyDir = dir.resolve("proxy");
    Path certs = dir.resolve("certs/dev");
    Files.createDirectories(proxyDir);
    Files.createDirectories(certs);
    Files.writeString(certs.resolve("server.pem"), "x");
    Files.writeString(certs.resolve("server.key"), "x");
    Files.setPosixFilePermissions(
        certs.resolve("server.key"), PosixFilePermissions.fromString("rw-------"));
    Path copy = proxyDir.resolve("sparkgate.yaml");
    Files.copy(Path.of("proxy/sparkgate.yaml"), copy);
    Files.createDirectories(dir.resolve("policies"));
    Files.copy(Path.of("policies/shared-server.yaml"), dir.resolve("policies/shared-server.yaml"));
    // Not open to everyone as shipped: the jwt template's REPLACE-ME stops the proxy.
    String message = assertThrows(ConfigException.class, () -> ProxyConfig.load(copy)).getMessage();
    assertTrue(
        message.contains(
            "auth.jwt.oidc_discovery_url: still the placeholder REPLACE-ME from the example"),
        message);
    Files.writeString(
        copy,
        Files.readString(copy)
            .replace("REPLACE-ME.example.com", "idp.example.com")
            .replace("audience: REPLACE-ME", "audience: sparkgate"));
    ProxyConfig config = ProxyConfig.load(copy);
    assertEquals(
        "https://idp.example.com/realms/spark", config.auth().jwt().orElseThrow().issuer());
    assertEquals(15003, config.listen().port());
    assertEquals(dir.resolve("policies/shared-server.yaml"), config.policy().file().orElseThrow());
    assertEquals("deny", config.policy().defaultEffect());
    assertEquals(certs.resolve("server.key"), config.tls().orElseThrow().keyFile());
  }

  @Test
  void policyAndBackendProfile_parsed() throws IOException {
    Files.writeString(dir.resolve("p.yaml"), "rules: []\n");
    ProxyConfig config =
        ProxyConfig.load(
            write(
                "listen:\n  port: 0\n"
                    + TLS
                    + "backend:\n  address: localhost:15002\n  profile:\n    refresh_interval: 30s\n"
                    + "    extensions: [a.B]\n    catalogs: {iceberg: org.apache.iceberg.spark.SparkCatalog}\n"
                    + "policy:\n  file: p.yaml\n  default_effect: allow\n"));
    assertEquals(dir.resolve("p.yaml"), config.policy().file().orElseThrow());
    assertEquals("allow", config.policy().defaultEffect());
    assertEquals(Duration.ofSeconds(30), config.firstBackend().profile().refreshInterval());
    assertEquals(
        java.util.List.of("a.B"), config.firstBackend().profile().extensions().orElseThrow());
    assertEquals(
        "org.apache.iceberg.spark.SparkCatalog",
        config.firstBackend().profile().catalogs().orElseThrow().get("iceberg"));
    String message =
        error(
            "listen:\n  port: 0\n"
                + TLS
                + BACKEND
                + "policy:\n  file: p.yaml\n  default_effect: maybe\n");
    assertTrue(message.contains("policy.default_effect: must be deny or allow"), message);
  }

  @Test
  void policy_maxDecompressedPlanBytes_defaultAndBounds() throws IOException {
    Files.writeString(dir.resolve("p.yaml"), "rules: []\n");
    String base = "listen:\n  port: 0\n" + TLS + BACKEND + "auth:\n  anonymous: true\n";
    assertEquals(
        64L << 20,
        ProxyConfig.load(write(base + "policy:\n  file: p.yaml\n"))
            .policy()
            .maxDecompressedPlanBytes());
    assertEquals(
        256L << 20,
        ProxyConfig.load(
                write(base + "policy:\n  file: p.yaml\n  max_decompressed_plan_bytes: 256MiB\n"))
            .policy()
            .maxDecompressedPlanBytes());
    String message = error(base + "policy:\n  file: p.yaml\n  max_decompressed_plan_bytes: 1KiB\n");
    assertTrue(message.contains("policy.max_decompressed_plan_bytes: must be between"), message);
  }

  @Test
  void admin_offUnlessConfigured_loopbackByDefault_metricsAnAlias_validated() throws IOException {
    assertFalse(ProxyConfig.load(write(TLS + BACKEND)).admin().enabled());
    for (String section : List.of("admin", "metrics")) {
      AdminConfig a = ProxyConfig.load(write(TLS + BACKEND + section + ": {}\n")).admin();
      assertTrue(a.enabled(), section);
      assertEquals("127.0.0.1", a.address());
      assertEquals(9464, a.port());
      assertEquals("/metrics", a.metricsPath());
      assertFalse(a.requiresCredentials());
    }
    Files.writeString(dir.resolve("admin.token"), "s3cret-admin\n");
    AdminConfig a =
        ProxyConfig.load(
                write(
                    TLS
                        + BACKEND
                        + "admin:\n  address: 0.0.0.0\n  port: 9100\n  path: /prom\n"
                        + "  token_file: admin.token\n"))
            .admin();
    assertEquals("0.0.0.0", a.address());
    assertEquals(9100, a.port());
    assertEquals("/prom", a.metricsPath());
    assertTrue(a.requiresCredentials());
    assertEquals("s3cret-admin", a.token().orElseThrow().reveal());
    assertFalse(a.toString().contains("s3cret"), a.toString());

    String message = error(TLS + BACKEND + "admin:\n  address: 0.0.0.0\n");
    assertTrue(
        message.contains("admin.address: is 0.0.0.0, beyond loopback")
            && message.contains("admin.token_file"),
        message);
    message = error(TLS + BACKEND + "metrics:\n  address: 0.0.0.0\n");
    assertTrue(message.contains("metrics.token_file"), message);
    message = error(TLS + BACKEND + "admin: {}\nmetrics: {}\n");
    assertTrue(message.contains("metrics: is the old name of admin"), message);
    message = error("listen:\n  port: 9100\n" + TLS + BACKEND + "admin:\n  port: 9100\n");
    assertTrue(message.contains("admin.port: is listen.port too (9100)"), message);
    message = error(TLS + BACKEND + "metrics:\n  path: metrics\n");
    assertTrue(message.contains("metrics.path: must be an absolute URL path"), message);
    message = error(TLS + BACKEND + "admin:\n  path: /readyz\n");
    assertTrue(message.contains("admin.path: /readyz is taken"), message);
    message = error(TLS + BACKEND + "metrics:\n  port: 70000\n");
    assertTrue(message.contains("metrics.port"), message);
    message = error(TLS + BACKEND + "admin:\n  listen: 9100\n");
    assertTrue(message.contains("admin.listen"), message);
    message = error(TLS + BACKEND + "admin:\n  token_file: missing.token\n");
    assertTrue(message.contains("admin.token_file"), message);
  }

  @Test
  void sizesAndDurations_parsed() throws IOException {
    ProxyConfig config =
        ProxyConfig.load(
            write(
                "listen:\n  max_inbound_message_size: 4MiB\n  shutdown_grace: 500ms\n  port: 0\n"
                    + TLS
                    + BACKEND));
    assertEquals(4L * 1024 * 1024, config.listen().maxInboundMessageBytes());
    assertEquals(Duration.ofMillis(500), config.listen().shutdownGrace());
    assertEquals(0, config.listen().port());
  }

  @Test
  void auditFsyncInterval_defaultSetAndValidated() throws IOException {
    Files.createDirectories(dir.resolve("a"));
    AuditConfig fallback =
        ProxyConfig.load(write(TLS + BACKEND + "audit:\n  file: a/audit.jsonl\n")).audit();
    assertEquals(AuditConfig.Fsync.BATCH, fallback.fsync());
    assertEquals(Duration.ofMillis(100), fallback.fsyncInterval());
    AuditConfig set =
        ProxyConfig.load(
                write(TLS + BACKEND + "audit:\n  file: a/audit.jsonl\n  fsync_interval: 10ms\n"))
            .audit();
    assertEquals(Duration.ofMillis(10), set.fsyncInterval());
    assertTrue(
        error(
                TLS
                    + BACKEND
                    + "audit:\n  file: a/audit.jsonl\n  fsync: always\n  fsync_interval: 1s\n")
            .contains("audit.fsync_interval: applies only with fsync: batch (fsync is always)"));
    assertTrue(
        error(TLS + BACKEND + "audit:\n  file: a/audit.jsonl\n  fsync_interval: 0ms\n")
            .contains("audit.fsync_interval: must be between"));
  }

  @Test
  void unknownKey_namesFileKeyAndValidKeys() throws IOException {
    String message = error("listen:\n  prot: 1\n" + TLS + BACKEND);
    assertTrue(message.startsWith(dir.resolve("sparkgate.yaml").toString()), message);
    assertTrue(message.contains("listen.prot: unknown key"), message);
    assertTrue(message.contains("port"), message);
  }

  @Test
  void eventLoopSpin_inMicroseconds() throws IOException {
    ProxyConfig config =
        ProxyConfig.load(write("listen:\n  event_loop_spin: 50us\n" + TLS + BACKEND));
    assertEquals(java.time.Duration.ofNanos(50_000), config.listen().eventLoopSpin());
  }

  @Test
  void duplicateKey_refusedNamingFileAndBothLines() throws IOException {
    assertEquals(
        at(3) + "listen.port: duplicate key (first at line 2)",
        error("listen:\n  port: 1\n  port: 2\n" + TLS + BACKEND));
    // A whole section given twice: before, the second silently replaced the first.
    assertEquals(
        at(6) + "backend: duplicate key (first at line 4)",
        error(TLS + BACKEND + "backend:\n  address: elsewhere:15002\n"));
    assertEquals(
        at(10) + "auth.static_tokens[0].principal: duplicate key (first at line 9)",
        error(
            TLS
                + BACKEND
                + "auth:\n  static_tokens:\n    - sha256: "
                + "a".repeat(64)
                + "\n      principal: a\n      principal: b\n"));
  }

  @Test
  void typeError_namesFileLineAndKey() throws IOException {
    assertEquals(
        at(3) + "listen.port: must be a whole number, got 'high'",
        error("listen:\n  address: 127.0.0.1\n  port: high\n" + TLS + BACKEND));
    assertEquals(
        at(8) + "audit.fsync: must be never, batch or always, got 'sometimes'",
        error(TLS + BACKEND + "audit:\n  stdout: true\n  fsync: sometimes\n"));
  }

  @Test
  void unknownKey_nested_namesFileLineAndPath() throws IOException {
    assertEquals(
        at(8)
            + "backend.profile.refresh: unknown key (valid keys here: "
            + "catalogs, default_catalog, default_fs, extensions, refresh_interval, spark_version)",
        error(TLS + BACKEND + "  profile:\n    spark_version: 4.0.0\n    refresh: 1m\n"));
  }

  @Test
  void unknownSection_refused() throws IOException {
    assertTrue(error(TLS + BACKEND + "listne:\n  port: 1\n").contains("listne: unknown key"));
  }

  @Test
  void badValues_precise() throws IOException {
    assertTrue(
        error("listen:\n  port: 70000\n" + TLS + BACKEND)
            .contains("listen.port: must be between 0 and 65535, got 70000"));
    assertTrue(
        error("listen:\n  plaintext: yes please\n" + TLS + BACKEND)
            .contains("listen.plaintext: must be true or false"));
    assertTrue(
        error("listen:\n  event_loops: 0\n" + TLS + BACKEND)
            .contains("listen.event_loops: must be between 1 and 1024, got 0"));
    assertTrue(
        error("listen:\n  event_loop_spin: 2ms\n" + TLS + BACKEND)
            .contains("listen.event_loop_spin: must be between 0s and 1ms, got 2ms"));
    assertTrue(
        error("listen:\n  event_loop_spin: 50\n" + TLS + BACKEND)
            .contains("listen.event_loop_spin: must be a duration such as 50us"));
    assertTrue(
        error("listen:\n  event_loop_spin: 99999999999999999999us\n" + TLS + BACKEND)
            .contains(
                "listen.event_loop_spin: must be between 0s and 1ms, got '99999999999999999999us'"));
    assertTrue(
        error("listen:\n  max_inbound_message_size: lots\n" + TLS + BACKEND)
            .contains("listen.max_inbound_message_size: must be a size"));
    // Found by ProxyConfigFuzzTest: digits beyond a long threw NumberFormatException, and a size
    // past a long (2^34 GiB + 1 GiB, 2^64 + 1 MiB) wrapped around to one in range and was accepted
    // as 1 GiB or 1 MiB.
    for (String size :
        new String[] {"99999999999999999999MiB", "17179869185GiB", "18446744073710600192"}) {
      assertTrue(
          error("listen:\n  max_inbound_message_size: " + size + "\n" + TLS + BACKEND)
              .contains(
                  "listen.max_inbound_message_size: must be between 1024 and 2147483647 bytes, got"),
          size);
    }
    assertTrue(
        error(TLS + "backend:\n  address: localhost\n")
            .contains("backend.address: must be host:port"));
    assertTrue(
        error(TLS + "backend:\n  address: localhost:99999\n")
            .contains("backend.address: port must be between 1 and 65535"));
    assertTrue(error(TLS).contains("pools: is required"));
  }

  @Test
  void tls_requiredUnlessPlaintext_andFilesMustExist() throws IOException {
    assertTrue(error(BACKEND).contains("tls: is required unless listen.plaintext is true"));
    assertTrue(
        error("tls:\n  cert_file: missing.pem\n  key_file: server.key\n" + BACKEND)
            .contains("tls.cert_file: file " + dir.resolve("missing.pem") + " does not exist"));
    assertTrue(
        error("listen:\n  plaintext: true\n  address: 127.0.0.1\n" + TLS + BACKEND)
            .contains("listen.plaintext is true but a tls section is set"));
    ProxyConfig plain =
        ProxyConfig.load(write("listen:\n  plaintext: true\n  address: 127.0.0.1\n" + BACKEND));
    assertTrue(plain.tls().isEmpty());
  }

  @Test
  void auth_required_unlessAnonymousSaidExplicitly() throws IOException {
    Path file = dir.resolve("sparkgate.yaml");
    write(TLS + BACKEND);
    Files.writeString(file, TLS + BACKEND); // write() adds auth; this file must not have it
    assertEquals(
        at(1)
            + "auth: is required: configure jwt, static_tokens or client_cert (proxy/sparkgate.yaml"
            + " shows each), or say auth: {anonymous: true} to accept every caller as user"
            + " 'anonymous'",
        assertThrows(ConfigException.class, () -> ProxyConfig.load(file)).getMessage());
    assertEquals(
        List.of(AuthConfig.Method.ANONYMOUS),
        ProxyConfig.load(write(TLS + BACKEND + "auth: {anonymous: true}\n")).auth().methods());
  }

  @Test
  void plaintext_beyondLoopback_refusedUnlessAcknowledged() throws IOException {
    assertEquals(
        at(2)
            + "listen.plaintext: is true on 0.0.0.0, which is not a loopback address: clients' tokens"
            + " and data would cross the network unencrypted. Configure tls instead, bind address:"
            + " 127.0.0.1, or (behind a mesh that encrypts) set listen.plaintext_beyond_loopback:"
            + " true",
        error("listen:\n  plaintext: true\n" + BACKEND));
    for (String host : List.of("10.0.0.7", "spark-proxy.internal", "::", "[::]")) {
      assertTrue(
          error("listen:\n  plaintext: true\n  address: '" + host + "'\n" + BACKEND)
              .contains("listen.plaintext: is true on " + host + ", which is not a loopback"),
          host);
    }
    for (String host : List.of("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost")) {
      assertTrue(
          ProxyConfig.load(
                  write("listen:\n  plaintext: true\n  address: '" + host + "'\n" + BACKEND))
              .listen()
              .loopbackOnly(),
          host);
    }
    ProxyConfig acknowledged =
        ProxyConfig.load(
            write("listen:\n  plaintext: true\n  plaintext_beyond_loopback: true\n" + BACKEND));
    assertTrue(acknowledged.listen().plaintext());
    assertFalse(acknowledged.listen().loopbackOnly());
    assertEquals(
        at(2) + "listen.plaintext_beyond_loopback: is set but listen.plaintext is not: remove it",
        error("listen:\n  plaintext_beyond_loopback: true\n" + TLS + BACKEND));
  }

  @Test
  void tlsPrivateKey_readableByGroupOrOthers_refusedNamingFileAndChmod() throws IOException {
    Path key = dir.resolve("server.key");
    write(TLS + BACKEND);
    for (String mode : List.of("rw-r--r--", "rw----r--", "rw-rw----", "rw-r-----", "r--r-----")) {
      Files.setPosixFilePermissions(key, PosixFilePermissions.fromString(mode));
      // Tests run as root here, and root may keep a key its group reads (below): hand the key to
      // another owner, as an operator's key usually is.
      if (ROOT) Files.setAttribute(key, "unix:uid", 65534);
      Path file = dir.resolve("sparkgate.yaml");
      String message =
          assertThrows(ConfigException.class, () -> ProxyConfig.load(file)).getMessage();
      assertEquals(
          at(3)
              + "tls.key_file: private key "
              + key
              + " is accessible to "
              + (mode.substring(6).equals("---") ? "its group" : "others")
              + " (mode "
              + mode
              + "): run chmod 600 "
              + key,
          message,
          mode);
    }
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    assertEquals(
        key, ProxyConfig.load(dir.resolve("sparkgate.yaml")).tls().orElseThrow().keyFile());
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("r--------"));
    ProxyConfig.load(dir.resolve("sparkgate.yaml"));
  }

  @Test
  void tlsPrivateKey_ownedByRoot_mayBeReadByItsGroup_only() throws IOException {
    assumeTrue(ROOT, "only root can hand a file to root");
    Path key = dir.resolve("server.key");
    write(TLS + BACKEND);
    Files.setAttribute(key, "unix:uid", 0);
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("r--r-----"));
    assertEquals(
        key, ProxyConfig.load(dir.resolve("sparkgate.yaml")).tls().orElseThrow().keyFile());
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-rw----"));
    assertTrue(
        assertThrows(ConfigException.class, () -> ProxyConfig.load(dir.resolve("sparkgate.yaml")))
            .getMessage()
            .contains("is accessible to its group (mode rw-rw----): run chmod 600 " + key));
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
    assertTrue(
        assertThrows(ConfigException.class, () -> ProxyConfig.load(dir.resolve("sparkgate.yaml")))
            .getMessage()
            .contains("is accessible to others (mode rw-r--r--)"));
  }

  @Test
  void forwardHeaders_noneByDefault_validated_identityAndAddressesNever() throws IOException {
    assertEquals(List.of(), ProxyConfig.load(write(TLS + BACKEND)).listen().forwardHeaders());
    assertEquals(
        List.of("x-team", "grpc-trace-bin"),
        ProxyConfig.load(
                write("listen:\n  forward_headers: [x-team, grpc-trace-bin]\n" + TLS + BACKEND))
            .listen()
            .forwardHeaders());
    for (String name :
        List.of(
            "authorization",
            "x-forwarded-for",
            "x-forwarded-user",
            "forwarded",
            "x-real-ip",
            "x-user",
            "spark-user",
            "x-remote-principal",
            "grpc-timeout")) {
      assertEquals(
          at(2)
              + "listen.forward_headers: '"
              + name
              + "' can never be forwarded: a client must not assert credentials, its address or an"
              + " identity to the backend (the proxy sets x-forwarded-for itself)",
          error("listen:\n  forward_headers: [" + name + "]\n" + TLS + BACKEND),
          name);
    }
    assertTrue(
        error("listen:\n  forward_headers: [X-Team]\n" + TLS + BACKEND)
            .contains("listen.forward_headers: 'X-Team' is not a header name"));
    assertTrue(
        error("listen:\n  forward_headers: [x-a, x-a]\n" + TLS + BACKEND)
            .contains("listen.forward_headers: lists 'x-a' twice"));
  }

  @Test
  void adminTlsPrivateKey_checkedToo() throws IOException {
    write(TLS + BACKEND);
    Files.writeString(dir.resolve("admin.key"), "key");
    Files.setPosixFilePermissions(
        dir.resolve("admin.key"), PosixFilePermissions.fromString("rw-r--r--"));
    assertTrue(
        error(TLS + BACKEND + "admin:\n  tls: {cert_file: server.pem, key_file: admin.key}\n")
            .contains(
                "admin.tls.key_file: private key "
                    + dir.resolve("admin.key")
                    + " is accessible to others (mode rw-r--r--): run chmod 600 "
                    + dir.resolve("admin.key")),
        "admin");
  }

  @Test
  void backendTimeouts_defaultsAndBounds() throws IOException {
    String auth = "auth:\n  anonymous: true\n";
    ProxyConfig defaults = ProxyConfig.load(write(TLS + auth + BACKEND));
    assertEquals(Duration.ofSeconds(10), defaults.firstBackend().connectTimeout());
    assertEquals(Duration.ofSeconds(10), defaults.firstBackend().handshakeTimeout());
    ProxyConfig set =
        ProxyConfig.load(
            write(TLS + auth + BACKEND + "  connect_timeout: 2s\n  handshake_timeout: 500ms\n"));
    assertEquals(Duration.ofSeconds(2), set.firstBackend().connectTimeout());
    assertEquals(Duration.ofMillis(500), set.firstBackend().handshakeTimeout());
    String message = error(TLS + auth + BACKEND + "  handshake_timeout: 10ms\n");
    assertTrue(message.contains("backend.handshake_timeout"), message);
    message = error(TLS + auth + BACKEND + "  connect_timeout: soon\n");
    assertTrue(message.contains("backend.connect_timeout"), message);
  }

  @Test
  void backendToken_neverPrinted() throws IOException {
    ProxyConfig config = ProxyConfig.load(write(TLS + BACKEND + "  token: s3cr3t-value\n"));
    assertEquals("s3cr3t-value", config.firstBackend().token().orElseThrow().reveal());
    assertFalse(config.toString().contains("s3cr3t-value"), config.toString());
  }

  @Test
  void emptyOrInvalidYaml_explained() throws IOException {
    assertTrue(
        error("")
            .endsWith(
                "sparkgate.yaml:1: the file is empty; see proxy/sparkgate.yaml for a complete example"));
    assertTrue(
        error("- listen\n")
            .endsWith(
                "sparkgate.yaml:1: the top level must be a mapping of sections (listen, tls, pools, ...)"));
    assertTrue(error("listen: [1, 2\n").contains("sparkgate.yaml:2:1: not valid YAML"));
    Path missing = dir.resolve("nope.yaml");
    assertTrue(
        assertThrows(ConfigException.class, () -> ProxyConfig.load(missing))
            .getMessage()
            .contains("no such file"));
  }
}
