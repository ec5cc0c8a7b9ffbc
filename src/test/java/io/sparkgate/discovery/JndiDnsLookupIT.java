package io.sparkgate.discovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.config.BackendConfig;
import io.sparkgate.config.BackendProfileConfig;
import io.sparkgate.config.DnsBackendConfig;
import io.sparkgate.testing.DnsServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The JDK's DNS client asking a real DNS server (dnsmasq on loopback): A, AAAA, SRV, no such name, no server. */
final class JndiDnsLookupIT {
  private static DnsServer dns;
  private final JndiDnsLookup lookup = new JndiDnsLookup();

  @BeforeAll
  static void start() throws Exception {
    dns =
        DnsServer.start(
            Path.of("target", "it", "jndi-dns-" + UUID.randomUUID()).toAbsolutePath(),
            "_spark._tcp.lookup.test,srv-target.lookup.test,15002",
            "_spark._tcp.lookup.test,srv-other.lookup.test,15003");
    dns.hosts(
        "127.0.0.1 two.lookup.test",
        "127.0.0.2 two.lookup.test",
        "::1 six.lookup.test",
        "127.0.0.5 srv-target.lookup.test",
        "127.0.0.6 srv-other.lookup.test");
  }

  @AfterAll
  static void stop() throws Exception {
    if (dns != null) dns.close();
  }

  private static DnsBackendConfig entry(
      String name, Integer port, List<DnsBackendConfig.Server> servers) {
    return new DnsBackendConfig(
        name,
        port == null ? OptionalInt.empty() : OptionalInt.of(port),
        Duration.ofSeconds(1),
        servers,
        new BackendConfig(
            name, port == null ? 0 : port, Optional.empty(), BackendProfileConfig.defaults()));
  }

  private static List<DnsBackendConfig.Server> server() {
    return List.of(new DnsBackendConfig.Server("127.0.0.1", dns.port()));
  }

  @Test
  void everyAddressRecord_isABackendAtThePort() throws Exception {
    assertEquals(
        Set.of("127.0.0.1:15002", "127.0.0.2:15002"),
        lookup.backends(entry("two.lookup.test", 15002, server())));
    assertEquals(
        Set.of("[0:0:0:0:0:0:0:1]:15002"),
        lookup.backends(entry("six.lookup.test", 15002, server())));
  }

  @Test
  void srvRecords_nameEachTargetAndPort() throws Exception {
    assertEquals(
        Set.of("127.0.0.5:15002", "127.0.0.6:15003"),
        lookup.backends(entry("_spark._tcp.lookup.test", null, server())));
  }

  @Test
  void noSuchName_isAnEmptyAnswer() throws Exception {
    assertEquals(Set.of(), lookup.backends(entry("nothing.lookup.test", 15002, server())));
    assertEquals(Set.of(), lookup.backends(entry("_none._tcp.lookup.test", null, server())));
  }

  @Test
  void aServerThatDoesNotAnswer_isAFailure() throws Exception {
    // A port on which nothing listens: no answer.
    DnsBackendConfig nobody =
        entry("two.lookup.test", 15002, List.of(new DnsBackendConfig.Server("127.0.0.1", 9)));
    DnsLookup.DnsFailure e =
        assertThrows(DnsLookup.DnsFailure.class, () -> lookup.backends(nobody));
    assertTrue(e.getMessage().contains("no answer from [127.0.0.1:9]"), e.getMessage());
  }

  @Test
  void withoutServers_theSystemResolverAnswers() throws Exception {
    assertTrue(lookup.backends(entry("localhost", 15002, List.of())).contains("127.0.0.1:15002"));
  }
}
