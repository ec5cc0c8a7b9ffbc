package io.sparkgate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code - dns: ...} entries of a pool's backends: what they mean, and each mistake named precisely. */
final class DnsBackendConfigTest {
  @TempDir Path dir;

  /** A configuration whose pool analytics has these backend entries. */
  private ProxyConfig load(String... entries) throws IOException {
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(
        file,
        "listen: {address: 127.0.0.1, port: 0, plaintext: true}\nauth: {anonymous: true}\npools:\n"
            + "  analytics:\n    backends:\n"
            + String.join("\n", entries.length == 0 ? new String[] {} : prefix(entries))
            + "\n");
    return ProxyConfig.load(file);
  }

  private static String[] prefix(String[] entries) {
    String[] out = new String[entries.length];
    for (int i = 0; i < entries.length; i++) out[i] = "      - " + entries[i];
    return out;
  }

  private String error(String... entries) {
    return assertThrows(ConfigException.class, () -> load(entries)).getMessage();
  }

  @Test
  void nameAndPort_asksAddressRecords_withTheDefaults() throws IOException {
    PoolConfig pool =
        load("{dns: 'spark-headless.spark.svc.cluster.local:15002'}").pool("analytics");
    assertEquals(List.of(), pool.backends());
    DnsBackendConfig d = pool.dns().get(0);
    assertEquals("spark-headless.spark.svc.cluster.local", d.name());
    assertEquals(OptionalInt.of(15002), d.port());
    assertEquals(false, d.srv());
    assertEquals(Duration.ofSeconds(10), d.refresh());
    assertEquals(List.of(), d.servers());
    assertEquals(BackendConfig.DEFAULT_CONNECT_TIMEOUT, d.backend().connectTimeout());
    assertEquals("spark-headless.spark.svc.cluster.local:15002", d.source());
  }

  @Test
  void nameWithoutPort_asksSrv_andTheEntrysSettingsApplyToEveryBackendFound() throws IOException {
    Files.writeString(dir.resolve("spark.token"), "s3cret\n");
    Files.writeString(dir.resolve("ca.pem"), "unused by the loader\n");
    DnsBackendConfig d =
        load("{dns: _spark-connect._tcp.spark.svc.cluster.local, refresh: 30s,"
                + " servers: ['127.0.0.1:5353', 10.96.0.10, '[fd00::10]:53'],"
                + " token_file: spark.token, connect_timeout: 2s, tls: {ca_file: ca.pem}}")
            .pool("analytics")
            .dns()
            .get(0);
    assertTrue(d.srv());
    assertEquals(Duration.ofSeconds(30), d.refresh());
    assertEquals(
        List.of("dns://127.0.0.1:5353", "dns://10.96.0.10:53", "dns://[fd00:0:0:0:0:0:0:10]:53"),
        d.servers().stream().map(DnsBackendConfig.Server::url).toList());
    BackendConfig found = d.backend().at("10.1.2.3", 15002);
    assertEquals("10.1.2.3:15002", found.address());
    assertEquals("s3cret", found.token().orElseThrow().reveal());
    assertEquals(Duration.ofSeconds(2), found.connectTimeout());
    // The certificate is checked for the name asked, not the pod's address.
    assertEquals(
        "_spark-connect._tcp.spark.svc.cluster.local", found.tls().orElseThrow().serverName());
  }

  @Test
  void listedAndFoundBackends_mayShareAPool() throws IOException {
    PoolConfig pool = load("spark-a:15002", "{dns: 'spark.example.com:15002'}").pool("analytics");
    assertEquals(1, pool.backends().size());
    assertEquals(1, pool.dns().size());
  }

  @Test
  void mistakes_areNamed() {
    assertTrue(
        error("{dns: 'spark:http'}").contains("dns: port must be a number, got 'http'"),
        error("{dns: 'spark:http'}"));
    assertTrue(error("{dns: 'spark:0'}").contains("port must be between 1 and 65535"));
    assertTrue(error("{dns: 'spark connect:15002'}").contains("must be a DNS name"));
    assertTrue(error("{dns: 'a..b:15002'}").contains("must be a DNS name"));
    assertTrue(error("{dns: '10.0.0.1:15002'}").contains("is an IP address, not a name"));
    assertTrue(error("{dns: ''}").contains("dns"));
    assertTrue(error("{dns: 's:1', refresh: 100ms}").contains("refresh"));
    assertTrue(error("{dns: 's:1', refresh: 2h}").contains("refresh"));
    assertTrue(error("{dns: 's:1', servers: []}").contains("servers: is empty"));
    String byName = error("{dns: 's:1', servers: [kube-dns.kube-system]}");
    assertTrue(byName.contains("each must be a DNS server's IP address"), byName);
    assertTrue(byName.contains("'kube-dns.kube-system'"), byName);
    assertTrue(error("{dns: 's:1', servers: ['127.0.0.1:99999']}").contains("servers"));
    assertTrue(error("{dns: 's:1', address: 'a:1'}").contains("set address or dns, not both"));
    assertTrue(error("{dns: 's:1', refresh_every: 1s}").contains("refresh_every"));
    String twice = error("{dns: 's.example:1'}", "{dns: 's.example:1'}");
    assertTrue(twice.contains("s.example:1 is listed twice"), twice);
  }

  @Test
  void theErrorNamesTheFileAndLine() {
    String message = error("spark-a:15002", "{dns: 'spark:x'}");
    assertTrue(message.startsWith(dir.resolve("sparkgate.yaml") + ":"), message);
    assertTrue(message.contains(":7:"), message);
  }

  @Test
  void profilesMustAgree_acrossListedAndFoundBackends() {
    String message =
        error("spark-a:15002", "{dns: 'spark.example.com:15002', profile: {spark_version: 3.5.1}}");
    assertTrue(message.contains("its profile differs from the pool's first backend"), message);
  }
}
