package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.rpc.RetryInfo;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.sparkgate.Sparkgate;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.DnsServer;
import io.sparkgate.testing.MetricsScrape;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Pools whose backends a real DNS server names (dnsmasq on loopback), with the shared real Spark server and
 * the real JVM client. The Spark server listens on every address, so {@code 127.0.0.1} and {@code 127.0.0.2}
 * (all of 127/8 is loopback) are two backends to the proxy: records added and removed in dnsmasq's hosts file
 * play pods joining and leaving a headless Service. Pool {@code analytics} is {@code dns:
 * spark.sparkgate.test:<port>} (A records); pool {@code srv}, taken by clients dialling {@code 127.0.0.1}, is
 * the SRV name {@code _spark._tcp.srv.sparkgate.test}. Both have the shipped shared-server policy, which needs the
 * backends' profile: read from a backend once DNS found one.
 *
 * <p>The tests run in order and share the proxy: a record added, one removed, then the DNS server down.
 */
@ExtendWith(SparkServerExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DnsDiscoveryIT {
  /**
   * One client for every admin request: a client per request keeps its connection open until it is
   * collected, and the polling loops piled them up against the admin listener's limit of 64 connections
   * (seen in CI as a readiness request answered with nothing).
   */
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ADMIN_TOKEN = "dns-admin-" + UUID.randomUUID();
  private static final Duration SESSION_LOST_AFTER = Duration.ofSeconds(6);

  private static int spark;
  private static Path dir;
  private static DnsServer dns;
  private static Sparkgate proxy;
  private static final List<SparkSession> clients = new ArrayList<>();

  /** Placed in test 1 on 127.0.0.1, which leaves in test 4. */
  private static String first;

  /** Placed in test 3 on 127.0.0.2, which stays. */
  private static String second;

  @BeforeAll
  static void start(SparkConnectServerProcess shared) throws Exception {
    spark = shared.port();
    dir = ProxyConfigs.freshDir("dns-discovery");
    dns =
        DnsServer.start(
            dir.resolve("dns"),
            "_spark._tcp.srv.sparkgate.test,srv-target.sparkgate.test," + spark);
    dns.hosts("127.0.0.1 spark.sparkgate.test", "127.0.0.3 srv-target.sparkgate.test");
    Path token = dir.resolve("admin.token");
    Files.writeString(token, ADMIN_TOKEN);
    Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
    proxy =
        Sparkgate.start(
            ProxyConfigs.write(
                dir,
                ProxyConfigs.PLAINTEXT_LISTENER,
                "pools:",
                "  analytics:",
                "    backends:",
                "      - dns: spark.sparkgate.test:" + spark,
                "        refresh: 1s",
                "        servers: ['" + dns.server() + "']",
                "  srv:",
                "    backends:",
                "      - {dns: _spark._tcp.srv.sparkgate.test, refresh: 1s, servers: ['"
                    + dns.server()
                    + "']}",
                "routes:",
                "  - match: {authority: '127.0.0.1'}",
                "    pool: srv",
                "  - pool: analytics",
                "sessions: {store: memory, idle_timeout: 1h}",
                "health: {interval: 1s, timeout: 1s, session_lost_after: "
                    + SESSION_LOST_AFTER.toSeconds()
                    + "s}",
                ProxyConfigs.policy("shared-server.yaml"),
                "audit: {file: audit.jsonl, fsync: batch}",
                "admin: {address: 127.0.0.1, port: 0, token_file: admin.token}"));
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      for (SparkSession s : clients) {
        try {
          s.close();
        } catch (Exception e) {
          // its backend may have left
        }
      }
    } finally {
      ProxyConfigs.closeAll(proxy, dns);
    }
  }

  @Test
  @Order(1)
  void aNameWithOneRecord_isAPoolOfOneBackend() throws Exception {
    Await.until(
        "analytics' one backend found and probed up",
        () -> backends("analytics").equals(Map.of(at(1), "up")));
    assertEquals(200, readyz().statusCode());
    first = UUID.randomUUID().toString();
    assertEquals(1L, query(session("localhost", first)));
    assertEquals(at(1), backendOf(first));
    // The pool's profile is read from the backend DNS found (the policy needs it).
    Await.until(
        "analytics' backend profile read",
        () -> metrics().get("sparkgate_backend_profile_known{pool=analytics}") == 1.0);
    Map<String, Double> m = metrics();
    assertEquals(1.0, m.get("sparkgate_dns_backends{pool=analytics}"));
    assertTrue(m.get("sparkgate_dns_lookups_total{pool=analytics,result=ok}") >= 1, m.toString());
  }

  @Test
  @Order(2)
  void srvRecords_nameTheBackendsOfANameWithoutPort() throws Exception {
    String target = "127.0.0.3:" + spark;
    Await.until("srv's backend found", () -> backends("srv").equals(Map.of(target, "up")));
    String session = UUID.randomUUID().toString();
    assertEquals(1L, query(session("127.0.0.1", session)));
    assertEquals(target, backendOf(session));
  }

  @Test
  @Order(3)
  void aRecordAdded_joinsThePool_andNewSessionsArePlacedOnIt() throws Exception {
    dns.hosts(
        "127.0.0.1 spark.sparkgate.test",
        "127.0.0.2 spark.sparkgate.test",
        "127.0.0.3 srv-target.sparkgate.test");
    Await.until(
        "127.0.0.2 joining analytics",
        () -> backends("analytics").equals(Map.of(at(1), "up", at(2), "up")));
    Map<String, Double> joined = metrics();
    assertEquals(2.0, joined.get("sparkgate_dns_backends{pool=analytics}"));
    assertEquals(1.0, joined.get(up(2)), "the backend that joined has its sparkgate_backend_up");
    // Rendezvous hashing spreads new sessions: within a few, one lands on the new backend.
    for (int i = 0; i < 16 && second == null; i++) {
      String session = UUID.randomUUID().toString();
      assertEquals(1L, query(session("localhost", session)));
      if (backendOf(session).equals(at(2))) second = session;
    }
    assertTrue(second != null, "no new session was placed on the backend that joined");
    // The session placed before the change stays where it is.
    assertEquals(1L, query(clients.get(0)));
    assertEquals(List.of(at(1)), backendsOf(first));
  }

  @Test
  @Order(4)
  void aRecordRemoved_drainsItsBackend() throws Exception {
    dns.hosts("127.0.0.2 spark.sparkgate.test", "127.0.0.3 srv-target.sparkgate.test");
    Await.until(
        "127.0.0.1 leaving analytics", () -> backends("analytics").equals(Map.of(at(2), "up")));
    Map<String, Double> left = metrics();
    assertEquals(1.0, left.get("sparkgate_dns_backends{pool=analytics}"));
    assertEquals(
        null, left.get(up(1)), "the backend that left has no sparkgate_backend_up any more");
    assertEquals(1.0, left.get(up(2)));

    // Its session is refused as a down backend's: retryably first, then lost for good.
    StatusRuntimeException down = refusal(first);
    assertEquals(Status.Code.UNAVAILABLE, down.getStatus().getCode(), down.toString());
    assertTrue(
        down.getStatus().getDescription().contains("SPARKGATE_BACKEND_UNAVAILABLE"),
        down.toString());
    assertTrue(
        StatusProto.fromThrowable(down).getDetailsList().stream()
            .anyMatch(a -> a.is(RetryInfo.class)),
        "RetryInfo");
    StatusRuntimeException lost =
        Await.value(
            "SPARKGATE_SESSION_LOST for the session of the backend that left",
            SESSION_LOST_AFTER.plusSeconds(20),
            () -> refusal(first),
            e -> e.getStatus().getCode() == Status.Code.FAILED_PRECONDITION);
    assertTrue(
        lost.getStatus().getDescription().contains("SPARKGATE_SESSION_LOST"), lost.toString());

    // No new session goes there; the session on the backend that stayed is served.
    for (int i = 0; i < 4; i++) {
      String session = UUID.randomUUID().toString();
      assertEquals(1L, query(session("localhost", session)));
      assertEquals(at(2), backendOf(session));
    }
    assertEquals(List.of(1L), sql(second, "SELECT 1"));
  }

  @Test
  @Order(5)
  void theDnsServerDown_keepsTheLastAnswer_countedAndShownInReadiness() throws Exception {
    String key = "sparkgate_dns_lookups_total{pool=analytics,result=error}";
    double before = metrics().getOrDefault(key, 0.0);
    dns.stop();
    Await.until("failed lookups counted", () -> metrics().getOrDefault(key, 0.0) >= before + 2);
    HttpResponse<String> ready = readyz();
    assertEquals(200, ready.statusCode(), ready.body());
    JsonNode dnsCheck = null;
    for (JsonNode c : JSON.readTree(ready.body()).get("checks")) {
      if (c.get("name").asText().equals("dns")) dnsCheck = c;
    }
    assertTrue(dnsCheck != null && dnsCheck.get("ok").asBoolean(), ready.body());
    String detail = dnsCheck.get("detail").asText();
    assertTrue(detail.contains("keeping the last answer, 1 backend(s)"), detail);
    assertTrue(detail.contains("no answer from [127.0.0.1:" + dns.port() + "]"), detail);
    assertEquals(Map.of(at(2), "up"), backends("analytics"));
    assertEquals(1.0, metrics().get("sparkgate_dns_backends{pool=analytics}"));

    String session = UUID.randomUUID().toString();
    assertEquals(1L, query(session("localhost", session)));
    assertEquals(at(2), backendOf(session));
    assertEquals(List.of(1L), sql(second, "SELECT 1"));

    dns.start();
    Await.until(
        "readiness no longer reporting DNS failing",
        () -> {
          JsonNode checks = JSON.readTree(readyz().body()).get("checks");
          for (JsonNode c : checks) {
            if (c.get("name").asText().equals("dns"))
              return c.get("detail").asText().startsWith("ok:");
          }
          return false;
        });
  }

  /** The {@code sparkgate_backend_up} series of analytics' backend at 127.0.0.{@code last}. */
  private static String up(int last) {
    return "sparkgate_backend_up{backend=" + at(last) + ",pool=analytics}";
  }

  private static String at(int last) {
    return "127.0.0." + last + ":" + spark;
  }

  /** A real JVM client session through the proxy, dialling {@code host}; closed after the class. */
  private static SparkSession session(String host, String id) {
    SparkSession s =
        SparkClients.connectFailFast("sc://" + host + ":" + proxy.port() + "/;session_id=" + id);
    clients.add(s);
    return s;
  }

  private static long query(SparkSession s) {
    return s.sql("SELECT 1 AS one").collectAsList().get(0).getInt(0);
  }

  /** Runs SQL in {@code session} over raw gRPC (no retries), as the client's own user. */
  private static List<Object> sql(String session, String sql) {
    ManagedChannel ch = Channels.plaintext(proxy.port()).build();
    try {
      List<List<Object>> rows =
          new ConnectRequests(ch, "anonymous")
              .execute(ConnectRequests.sqlRequest(session, "anonymous", sql));
      List<Object> out = new ArrayList<>();
      rows.forEach(r -> out.add(((Number) r.get(0)).longValue()));
      return out;
    } finally {
      ch.shutdownNow();
    }
  }

  private static StatusRuntimeException refusal(String session) {
    try {
      sql(session, "SELECT 1");
    } catch (StatusRuntimeException e) {
      return e;
    }
    fail("a session of a backend DNS no longer names was served");
    return null;
  }

  /** The one backend the audit records of {@code session}'s calls name. */
  private static String backendOf(String session) throws Exception {
    List<String> all =
        Await.value("audit records of " + session, () -> backendsOf(session), l -> !l.isEmpty());
    assertEquals(1, all.size(), "calls of one session on several backends: " + all);
    return all.get(0);
  }

  @SuppressWarnings("unchecked")
  private static List<String> backendsOf(String session) throws Exception {
    TreeSet<String> seen = new TreeSet<>();
    for (String line : AuditLines.complete(dir.resolve("audit.jsonl"))) {
      Map<String, Object> record = JSON.readValue(line, Map.class);
      if (session.equals(record.get("session_id")) && record.get("backend") != null) {
        seen.add((String) record.get("backend"));
      }
    }
    return List.copyOf(seen);
  }

  /** The admin API's view of {@code pool}: each backend's state, by address. */
  private static Map<String, String> backends(String pool) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + proxy.adminPort() + "/api/backends"))
                .header("Authorization", "Bearer " + ADMIN_TOKEN)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    Map<String, String> out = new java.util.TreeMap<>();
    for (JsonNode p : JSON.readTree(r.body()).get("pools")) {
      if (!p.get("pool").asText().equals(pool)) continue;
      for (JsonNode b : p.get("backends"))
        out.put(b.get("address").asText(), b.get("state").asText());
    }
    return out;
  }

  /** The metrics, asked with the admin token (the listener has one). */
  private static Map<String, Double> metrics() throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + proxy.adminPort() + "/metrics"))
                .header("Authorization", "Bearer " + ADMIN_TOKEN)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return MetricsScrape.parse(r.body());
  }

  private static HttpResponse<String> readyz() throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + proxy.adminPort() + "/readyz"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
