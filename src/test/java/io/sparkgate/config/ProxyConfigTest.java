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

final class ProxyConfigTest {
  @TempDir Path dir;

  private Path write(String yaml) throws IOException {
    Files.writeString(dir.resolve("server.pem"), "cert");
    Files.writeString(dir.resolve("server.key"), "key");
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(file, yaml);
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
  void shippedDefaultFile_isValidOnceDevCertsExist() throws IOException {
    Path proxyDir = dir.resolve("proxy");
    Path certs = dir.resolve("certs/dev");
    Files.createDirectories(proxyDir);
    Files.createDirectories(certs);
    Files.writeString(certs.resolve("server.pem"), "x");
    Files.writeString(certs.resolve("server.key"), "x");
    Path copy = proxyDir.resolve("sparkgate.yaml");
    Files.copy(Path.of("proxy/sparkgate.yaml"), copy);
    Files.createDirectories(dir.resolve("policies"));
    Files.copy(Path.of("policies/shared-server.yaml"), dir.resolve("policies/shared-server.yaml"));
    ProxyConfig config = ProxyConfig.load(copy);
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
    // past a long
    // (2^34 GiB + 1 GiB, 2^64 + 1 MiB) wrapped around to one in range and was accepted as 1 GiB or
    // 1 MiB.
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
        error("listen:\n  plaintext: true\n" + TLS + BACKEND)
            .contains("listen.plaintext is true but a tls section is set"));
    ProxyConfig plain = ProxyConfig.load(write("listen:\n  plaintext: true\n" + BACKEND));
    assertTrue(plain.tls().isEmpty());
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
