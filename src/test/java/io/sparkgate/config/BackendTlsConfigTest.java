package io.sparkgate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code tls} mapping of {@code backend} and of a pool's backend entries. */
final class BackendTlsConfigTest {
  private static final String HEAD =
      "listen: {address: 127.0.0.1, port: 0, plaintext: true}\nauth: {anonymous: true}\n";

  @TempDir Path dir;

  @BeforeEach
  void files() throws IOException {
    Files.writeString(dir.resolve("ca.pem"), "ca");
    Files.writeString(dir.resolve("client.pem"), "cert");
    Files.writeString(dir.resolve("client.key"), "key");
    Files.setPosixFilePermissions(
        dir.resolve("client.key"), PosixFilePermissions.fromString("rw-------"));
  }

  private ProxyConfig load(String yaml) throws IOException {
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(file, HEAD + yaml);
    return ProxyConfig.load(file);
  }

  private String error(String yaml) {
    return assertThrows(ConfigException.class, () -> load(yaml)).getMessage();
  }

  private static String backend(String tls) {
    return "backend:\n  address: spark-a.internal:15002\n  tls: " + tls + "\n";
  }

  @Test
  void absent_meansPlaintext_andBeyondLoopbackSaysSo() throws IOException {
    BackendConfig remote = load("backend: {address: 'spark-a:15002'}\n").firstBackend();
    assertTrue(remote.tls().isEmpty());
    assertTrue(remote.plaintextBeyondLoopback());
    assertFalse(
        load("backend: {address: 'localhost:15002'}\n").firstBackend().plaintextBeyondLoopback());
    assertFalse(
        load("backend: {address: '127.0.0.1:15002'}\n").firstBackend().plaintextBeyondLoopback());
    assertFalse(
        load("backend: {address: '[::1]:15002'}\n").firstBackend().plaintextBeyondLoopback());
  }

  @Test
  void everyKey_parsed() throws IOException {
    BackendConfig b =
        load(backend(
                "{ca_file: ca.pem, cert_file: client.pem, key_file: client.key,"
                    + " server_name: spark.example.com, reload_interval: 5s}"))
            .firstBackend();
    BackendTlsConfig tls = b.tls().orElseThrow();
    assertEquals(Optional.of(dir.resolve("ca.pem")), tls.caFile());
    assertEquals(Optional.of(dir.resolve("client.pem")), tls.certFile());
    assertEquals(Optional.of(dir.resolve("client.key")), tls.keyFile());
    assertEquals("spark.example.com", tls.serverName());
    assertEquals(Duration.ofSeconds(5), tls.reloadInterval());
    assertTrue(tls.clientCertificate());
    assertFalse(b.plaintextBeyondLoopback());
  }

  @Test
  void emptyMapping_meansTheJvmsTrustStore_andTheAddressesHost() throws IOException {
    BackendTlsConfig tls = load(backend("{}")).firstBackend().tls().orElseThrow();
    assertTrue(tls.caFile().isEmpty());
    assertFalse(tls.clientCertificate());
    assertEquals("spark-a.internal", tls.serverName());
    assertEquals(BackendTlsConfig.DEFAULT_RELOAD_INTERVAL, tls.reloadInterval());
  }

  @Test
  void bareTls_isRefused_neverQuietlyPlaintext() {
    String message = error("backend:\n  address: spark-a:15002\n  tls:\n");
    assertTrue(message.contains("backend.tls"), message);
    assertTrue(message.contains("tls: {}"), message);
  }

  @Test
  void poolEntries_takeTls_serverNameDefaultingToEachHost() throws IOException {
    ProxyConfig config =
        load(
            "pools:\n"
                + "  analytics:\n"
                + "    backends:\n"
                + "      - {address: 'spark-a:15002', tls: {ca_file: ca.pem}}\n"
                + "      - {address: '10.0.0.7:15002', tls: {ca_file: ca.pem}}\n"
                + "      - spark-c:15002\n"
                + "routes:\n"
                + "  - {pool: analytics}\n");
    var backends = config.pools().get("analytics").backends();
    assertEquals("spark-a", backends.get(0).tls().orElseThrow().serverName());
    assertEquals("10.0.0.7", backends.get(1).tls().orElseThrow().serverName());
    assertTrue(backends.get(2).tls().isEmpty());
  }

  @Test
  void certWithoutKey_andKeyWithoutCert_areRefused() {
    String message = error(backend("{cert_file: client.pem}"));
    assertTrue(message.contains("backend.tls"), message);
    assertTrue(message.contains("set key_file too"), message);
    message = error(backend("{key_file: client.key}"));
    assertTrue(message.contains("set cert_file too"), message);
  }

  @Test
  void missingFiles_areNamed() {
    String message = error(backend("{ca_file: nowhere.pem}"));
    assertTrue(message.contains("backend.tls.ca_file"), message);
    assertTrue(message.contains("nowhere.pem"), message);
  }

  @Test
  void keyReadableByOthers_isRefused() throws IOException {
    Files.setPosixFilePermissions(
        dir.resolve("client.key"), PosixFilePermissions.fromString("rw-r--r--"));
    String message = error(backend("{cert_file: client.pem, key_file: client.key}"));
    assertTrue(message.contains("backend.tls.key_file"), message);
    assertTrue(message.contains("chmod 600"), message);
  }

  @Test
  void serverName_mustBeAHostOrAddress_withoutAPort() throws IOException {
    String message = error(backend("{server_name: 'spark.example.com:15002'}"));
    assertTrue(message.contains("backend.tls.server_name"), message);
    assertTrue(message.contains("without a port"), message);
    assertTrue(error(backend("{server_name: 'https://spark'}")).contains("server_name"));
    assertEquals(
        "::1",
        load(backend("{server_name: '::1'}")).firstBackend().tls().orElseThrow().serverName());
  }

  @Test
  void unknownKey_isRefused_andThereIsNoInsecureSwitch() {
    String message = error(backend("{insecure: true}"));
    assertTrue(message.contains("insecure"), message);
  }
}
