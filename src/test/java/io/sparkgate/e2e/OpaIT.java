package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.Sparkgate;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.MetricsScrape;
import io.sparkgate.tls.DevCertificates;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Decisions from a real OPA ({@code opa run --server}, built from its Go module) running the shipped example
 * bundle (policies/opa), with the real Spark 4.0 server and the real JVM client through Sparkgate. The local
 * policy allows everything, so what is refused here OPA refused: alice (group analysts) may read but not
 * write the finance namespace, fiona (group finance) may. A refusal reaches the client with OPA's reason, and
 * the audit record carries the decision id OPA's own decision log has. OPA unreachable refuses under {@code
 * on_error: deny} and serves under {@code allow}; an OPA that accepts and never answers refuses within about
 * the timeout; OPA over TLS with a bearer token is reached with ca_file and token_file, and a wrong token is an
 * error; an edit to the watched bundle takes effect once the cache's time to live (2s here) passed.
 */
@ExtendWith(SparkServerExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OpaIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String INSERT = "INSERT INTO finance.payroll VALUES (1, 10)";
  private static final String FINANCE_REASON =
      "Only members of group finance may change tables in the finance namespace.";

  private static Path dir;
  private static Path bundle;
  private static OpaServer opa;
  private static ServerSocket silent;
  private static final List<Socket> held = new CopyOnWriteArrayList<>();
  private static Thread acceptor;
  private static int deadPort;
  private static String aliceToken;
  private static String fionaToken;
  private static Sparkgate proxy;
  private static Sparkgate downDeny;
  private static Sparkgate downAllow;
  private static Sparkgate slow;
  private static OpaServer opaTls;
  private static Sparkgate tls;
  private static Sparkgate wrongToken;
  private static final List<AutoCloseable> sessions = new ArrayList<>();

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    dir = ProxyConfigs.freshDir("opa");
    bundle = Files.createDirectories(dir.resolve("bundle"));
    // A copy: test (f) edits it. Only the policy itself; the schema would load as data.
    Files.copy(Path.of("policies", "opa", "sparkgate", "allow.rego"), bundle.resolve("allow.rego"));
    opa = OpaServer.start(dir, bundle);

    try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      deadPort = free.getLocalPort();
    }
    // Accepts and never answers: an OPA stuck past the timeout.
    silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    acceptor =
        new Thread(
            () -> {
              try {
                while (true) held.add(silent.accept());
              } catch (Exception closed) {
                // the test is over
              }
            },
            "opa-it-silent");
    acceptor.setDaemon(true);
    acceptor.start();

    certs = DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    ClientTrust.useTrustStore(certs.trustStore());
    aliceToken = "opa-it-alice-" + UUID.randomUUID();
    fionaToken = "opa-it-fiona-" + UUID.randomUUID();
    Files.writeString(dir.resolve("local.yaml"), "default: allow\nrules: []\n");

    proxy = proxy(server, "main", opa.url(), "deny", "200ms");
    // OPA over TLS, requiring a bearer token: the proxy trusts the dev CA and sends the token
    // file's.
    String opaToken = "opa-it-token-" + UUID.randomUUID();
    opaTls =
        OpaServer.startTls(
            Files.createDirectories(dir.resolve("opa-tls")),
            bundle,
            certs.serverCert(),
            certs.serverKey(),
            opaToken);
    Files.writeString(dir.resolve("opa.token"), opaToken + "\n");
    Files.writeString(dir.resolve("wrong.token"), "not-the-token\n");
    String https = "https://localhost:" + URI.create(opaTls.url()).getPort();
    tls = proxy(server, "tls", https, "deny", "1s", "opa.token");
    wrongToken = proxy(server, "wrong-token", https, "deny", "1s", "wrong.token");
    downDeny = proxy(server, "down-deny", "http://127.0.0.1:" + deadPort, "deny", "250ms");
    downAllow = proxy(server, "down-allow", "http://127.0.0.1:" + deadPort, "allow", "250ms");
    slow = proxy(server, "slow", "http://127.0.0.1:" + silent.getLocalPort(), "deny", "250ms");
  }

  private static DevCertificates.Generated certs;

  private static Sparkgate proxy(
      SparkConnectServerProcess server, String name, String url, String onError, String timeout)
      throws Exception {
    return proxy(server, name, url, onError, timeout, null);
  }

  /** @param tokenFile in {@link #dir}, for an https OPA (then trusting the dev CA too); null: neither */
  private static Sparkgate proxy(
      SparkConnectServerProcess server,
      String name,
      String url,
      String onError,
      String timeout,
      String tokenFile)
      throws Exception {
    Path d = Files.createDirectories(dir.resolve(name));
    String secured =
        tokenFile == null
            ? "    path: sparkgate/allow"
            : "    path: sparkgate/allow\n    ca_file: '"
                + certs.caCert()
                + "'\n    token_file: '"
                + dir.resolve(tokenFile)
                + "'";
    return Sparkgate.start(
        ProxyConfigs.write(
            d,
            "listen: {address: 127.0.0.1, port: 0}",
            "tls: {cert_file: '" + certs.serverCert() + "', key_file: '" + certs.serverKey() + "'}",
            "backend: {address: 'localhost:" + server.port() + "'}",
            "audit: {file: audit.jsonl, fsync: batch}",
            "policy:",
            "  file: '" + dir.resolve("local.yaml") + "'",
            "  opa:",
            "    url: " + url,
            secured,
            "    timeout: " + timeout,
            "    on_error: " + onError,
            "    cache: {max_entries: 1000, ttl: 2s}",
            "admin: {address: 127.0.0.1, port: 0}",
            "auth:",
            "  static_tokens:",
            "    - {sha256: " + sha256(aliceToken) + ", principal: alice, groups: [analysts]}",
            "    - {sha256: " + sha256(fionaToken) + ", principal: fiona, groups: [finance]}"));
  }

  private static SparkSession connect(Sparkgate p, String token) {
    SparkSession s =
        SparkClients.connectFailFast(
            "sc://localhost:" + p.port() + "/;use_ssl=true;token=" + token);
    sessions.add(s);
    return s;
  }

  @AfterAll
  static void stop() throws Exception {
    for (AutoCloseable s : sessions) {
      try {
        s.close();
      } catch (Exception e) {
        // refused sessions may fail to release
      }
    }
    ProxyConfigs.closeAll(proxy, downDeny, downAllow, slow, tls, wrongToken, opa, opaTls, silent);
    for (Socket s : held) s.close();
  }

  @Test
  @Order(1)
  void opaTest_passesOnTheShippedBundle() throws Exception {
    OpaServer.Result r = OpaServer.test(Path.of("policies", "opa"));
    assertEquals(0, r.status(), r.output());
    assertTrue(r.output().contains("PASS"), r.output());
    assertFalse(r.output().contains("FAIL"), r.output());
  }

  @Test
  @Order(2)
  void allowed_servedAndAudited_withOpasDecisionId() throws Exception {
    SparkSession alice = connect(proxy, aliceToken);
    assertEquals(42L, alice.sql("SELECT 42 AS answer").first().getInt(0));
    JsonNode record =
        record(
            proxy,
            "main",
            r ->
                "alice".equals(r.path("principal").asText())
                    && r.has("opa")
                    && "allow".equals(r.at("/opa/result").asText()));
    String id = record.at("/opa/decision_id").asText();
    assertFalse(id.isEmpty(), record.toString());
    Await.until("OPA logged decision " + id, () -> opa.output().contains(id));
  }

  @Test
  @Order(3)
  void refusedByOpa_clientSeesItsReason_auditJoinsOpasDecisionLog() throws Exception {
    SparkSession alice = connect(proxy, aliceToken);
    Exception e = assertThrows(Exception.class, () -> alice.sql(INSERT));
    String message = messageOf(e);
    assertTrue(message.contains(FINANCE_REASON), message);
    assertTrue(message.contains("opa:finance-writes"), message);
    JsonNode record =
        record(proxy, "main", r -> "opa:finance-writes".equals(r.path("rule").asText()));
    assertEquals("deny", record.path("decision").asText(), record.toString());
    assertEquals("deny", record.at("/opa/result").asText(), record.toString());
    String id = record.at("/opa/decision_id").asText();
    assertFalse(id.isEmpty(), record.toString());
    String line =
        Await.value(
            "OPA's decision log line for " + id,
            () -> opa.decisionLines().stream().filter(l -> l.contains(id)).findFirst().orElse(null),
            l -> l != null);
    JsonNode logged = JSON.readTree(line);
    assertEquals(id, logged.path("decision_id").asText());
    assertEquals("finance-writes", logged.at("/result/rule").asText(), line);
    assertEquals("alice", logged.at("/input/principal/name").asText(), line);
    assertEquals("modify", logged.at("/input/data/0/privilege").asText(), line);

    // Asked again at once: the cache answers, audited with the first asking's decision id.
    messageOf(assertThrows(Exception.class, () -> alice.sql(INSERT)));
    JsonNode cached =
        record(
            proxy,
            "main",
            r ->
                "opa:finance-writes".equals(r.path("rule").asText())
                    && r.at("/opa/cached").asBoolean());
    assertEquals(id, cached.at("/opa/decision_id").asText(), cached.toString());
    Map<String, Double> metrics = MetricsScrape.get(proxy.adminPort());
    assertTrue(
        metrics.getOrDefault(
                "sparkgate_policy_decisions_total{outcome=deny,pool=default,rule=opa:finance-writes}",
                0.0)
            >= 2,
        metrics.toString());
    assertTrue(
        metrics.get("sparkgate_opa_cache_hits_total{pool=default}") >= 1, metrics.toString());
    assertTrue(metrics.get("sparkgate_opa_requests_total{pool=default}") >= 2, metrics.toString());

    // Group finance may: OPA allows, and Spark itself answers (the table does not exist there).
    SparkSession fiona = connect(proxy, fionaToken);
    String spark = messageOf(assertThrows(Exception.class, () -> fiona.sql(INSERT)));
    assertFalse(spark.contains("SPARKGATE"), spark);
    assertTrue(spark.contains("TABLE_OR_VIEW_NOT_FOUND"), spark);
  }

  @Test
  @Order(4)
  void opaDown_onErrorDenyRefuses_onErrorAllowServes() throws Exception {
    SparkSession denied = connect(downDeny, aliceToken);
    String message = messageOf(assertThrows(Exception.class, () -> denied.sql("SELECT 1").first()));
    assertTrue(message.contains("policy service (OPA)"), message);
    assertTrue(message.contains("opa-unavailable"), message);
    JsonNode record = record(downDeny, "down-deny", r -> r.has("opa"));
    assertEquals("error", record.at("/opa/result").asText(), record.toString());
    assertTrue(record.at("/opa/error").asText().contains("cannot connect"), record.toString());

    SparkSession served = connect(downAllow, aliceToken);
    assertEquals(7, served.sql("SELECT 7").first().getInt(0));
  }

  @Test
  @Order(5)
  void opaSlow_refusedWithinAboutTheTimeout() throws Exception {
    SparkSession s = connect(slow, aliceToken);
    long start = System.nanoTime();
    String message = messageOf(assertThrows(Exception.class, () -> s.sql("SELECT 1").first()));
    Duration took = OpaServer.since(start);
    assertTrue(message.contains("policy service (OPA)"), message);
    assertTrue(took.compareTo(Duration.ofMillis(240)) >= 0, took.toString());
    assertTrue(took.compareTo(Duration.ofSeconds(3)) < 0, took.toString());
    JsonNode record = record(slow, "slow", r -> r.has("opa"));
    assertTrue(
        record.at("/opa/error").asText().contains("did not answer within 250ms"),
        record.toString());
  }

  @Test
  @Order(6)
  void https_withCaFileAndBearerToken_andAWrongTokenIsAnError() throws Exception {
    SparkSession alice = connect(tls, aliceToken);
    assertEquals(5, alice.sql("SELECT 5").first().getInt(0));
    String refused = messageOf(assertThrows(Exception.class, () -> alice.sql(INSERT)));
    assertTrue(refused.contains("opa:finance-writes"), refused);
    assertTrue(opaTls.output().contains("finance-writes"), "the TLS OPA decided");

    SparkSession denied = connect(wrongToken, aliceToken);
    String message = messageOf(assertThrows(Exception.class, () -> denied.sql("SELECT 1").first()));
    assertTrue(message.contains("opa-unavailable"), message);
    JsonNode record = record(wrongToken, "wrong-token", r -> r.has("opa"));
    assertTrue(record.at("/opa/error").asText().contains("HTTP 401"), record.toString());
  }

  @Test
  @Order(7)
  void bundleEdit_takesEffect() throws Exception {
    SparkSession alice = connect(proxy, aliceToken);
    String before = messageOf(assertThrows(Exception.class, () -> alice.sql(INSERT)));
    assertTrue(before.contains(FINANCE_REASON), before);
    Path rego = bundle.resolve("allow.rego");
    String changed = "The finance namespace is frozen for the year-end close.";
    Files.writeString(
        rego, Files.readString(rego).replace(FINANCE_REASON, changed), StandardCharsets.UTF_8);
    Await.until(
        "the edited bundle's reason reaches the client",
        () -> messageOf(assertThrows(Exception.class, () -> alice.sql(INSERT))).contains(changed));
  }

  private static String messageOf(Throwable e) {
    StringBuilder b = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) b.append(t).append('\n');
    return b.toString();
  }

  private static JsonNode record(
      Sparkgate p, String name, java.util.function.Predicate<JsonNode> match) throws Exception {
    Path audit = dir.resolve(name).resolve("audit.jsonl");
    return Await.value(
        "an audit record in " + audit,
        () -> {
          for (String line : AuditLines.complete(audit)) {
            JsonNode r = JSON.readTree(line);
            if (match.test(r)) return r;
          }
          return null;
        },
        r -> r != null);
  }

  private static String sha256(String token) throws Exception {
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
  }
}
