package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.sparkgate.Sparkgate;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.tls.DevCertificates;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every query of the shipped Grafana dashboard ({@code deploy/grafana/sparkgate.json}) and every shipped alerting
 * rule is run by a real Prometheus scraping Sparkgate in front of a real Spark 4.0 server, after the real JVM
 * client and raw gRPC calls made the traffic the panels show: answered queries, a policy refusal, an
 * authentication failure and a quota refusal, over TLS with an audit log. Needs the {@code prometheus} binary,
 * as {@link PrometheusIT} does.
 */
@ExtendWith(SparkServerExtension.class)
class DashboardIT {
  static final Path DASHBOARD = Path.of("deploy", "grafana", "sparkgate.json");

  /** Panels whose meters this proxy does not have: it fetches no JWKS. */
  private static final Set<String> EMPTY_HERE = Set.of("JWKS fetch failures");

  /** Panels of counters the traffic below increased twice, a scrape apart, so their rates are above zero. */
  private static final Set<String> RISING =
      Set.of(
          "Calls by method and code",
          "Failed calls by method and code",
          "Policy decisions by outcome",
          "Refusals by rule",
          "Authentication failures by reason",
          "Quota refusals by quota",
          "Audit records written and dropped");

  /** A static token whose principal an override limits to 16-byte requests: every plan is refused. */
  private static final String QUOTA_PROBE_TOKEN = "dashboard-it-quota-probe";

  private static Sparkgate proxy;
  private static SparkSession spark;
  private static PrometheusServer prometheus;
  private static DevCertificates.Generated certs;

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    String binary = PrometheusServer.binary();
    Path dir = ProxyConfigs.freshDir("dashboard");
    certs = DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    String probeSha256 =
        HexFormat.of()
            .formatHex(
                MessageDigest.getInstance("SHA-256")
                    .digest(QUOTA_PROBE_TOKEN.getBytes(StandardCharsets.UTF_8)));
    Path config = dir.resolve("sparkgate.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0}",
            "tls: {cert_file: certs/server.pem, key_file: certs/server.key}",
            "backend: {address: '127.0.0.1:" + server.port() + "'}",
            ProxyConfigs.policy("shared-server.yaml"),
            "auth:",
            "  anonymous: fallback",
            "  static_tokens: [{sha256: '" + probeSha256 + "', principal: quota-probe}]",
            "quotas:",
            "  per_principal: {requests_per_second: 1000}",
            "  overrides:",
            "    - {match: {principals: [quota-probe]}, per_principal: {max_plan_bytes: 16}}",
            "audit: {file: audit.jsonl}",
            "metrics: {address: 127.0.0.1, port: 0}",
            ""));
    proxy = Sparkgate.start(ProxyConfig.load(config));
    prometheus =
        PrometheusServer.start(binary, dir, proxy.metricsPort(), List.of(AlertRulesIT.RULES));
    ClientTrust.useTrustStore(certs.trustStore());
    spark = SparkClients.connect("sc://localhost:" + proxy.port() + "/;use_ssl=true");
  }

  @AfterAll
  static void stop() throws Exception {
    ProxyConfigs.closeAll(prometheus, spark, proxy);
  }

  @Test
  void everyPanelQueryRunsAndTheTrafficShows() throws Exception {
    // Twice, a scrape apart: a counter's first sample has no increase to rate.
    await("up{job=\"sparkgate\"}", 1.0);
    // The GC pause timer exists only once a collection happened in this JVM (the proxy runs in it):
    // one now, so that the panel does not depend on how busy the heap was before.
    System.gc();
    traffic();
    await("sum(sparkgate_auth_failures_total)", 1.0);
    await("sum(sparkgate_quota_refusals_total)", 1.0);
    await("sum(sparkgate_policy_decisions_total{outcome=\"deny\"})", 1.0);
    traffic();
    await("sum(sparkgate_auth_failures_total)", 2.0);
    await("sum(sparkgate_quota_refusals_total)", 2.0);
    await("sum(sparkgate_policy_decisions_total{outcome=\"deny\"})", 2.0);
    await("sum(sparkgate_audit_records_written_total)", 1.0);
    await("count(jvm_gc_pause_seconds_count)", 1.0);

    Map<String, Integer> seriesByTarget = new TreeMap<>();
    List<String> errors = new ArrayList<>();
    Set<String> empty = new TreeSet<>();
    Set<String> notRising = new TreeSet<>(RISING);
    for (JsonNode panel : panels()) {
      String title = panel.path("title").asText();
      for (JsonNode target : panel.path("targets")) {
        String name = title + " [" + target.path("refId").asText() + "]";
        String expr = substitute(target.path("expr").asText());
        JsonNode answer = prometheus.query(expr);
        if (answer == null || !"success".equals(answer.path("status").asText())) {
          errors.add(name + ": " + expr + " -> " + answer);
          continue;
        }
        JsonNode result = answer.path("data").path("result");
        seriesByTarget.put(name, result.size());
        if (result.isEmpty()) {
          empty.add(title);
        }
        for (JsonNode series : result) {
          double v = Double.parseDouble(series.path("value").get(1).asText());
          if (v > 0) {
            notRising.remove(title);
          }
        }
      }
    }
    // The report: what each query returned, so a change that empties a panel shows here first.
    seriesByTarget.forEach((name, n) -> System.out.println("dashboard: " + n + " series: " + name));
    System.out.println("dashboard: empty panels: " + empty);
    assertEquals(List.of(), errors, "queries Prometheus refused");
    assertFalse(seriesByTarget.isEmpty(), "no panel queries in " + DASHBOARD);
    assertEquals(EMPTY_HERE, empty, "panels with no series; log: " + prometheus.logText());
    assertEquals(Set.of(), notRising, "panels of the traffic made here without a value above 0");
  }

  /** Every group of the shipped rules is loaded and evaluates against the scraped series without error. */
  @Test
  void alertRulesLoadAndEvaluate() throws Exception {
    Set<String> groups = new TreeSet<>();
    int rules = 0;
    for (Object g : AlertRulesIT.list(AlertRulesIT.yaml(AlertRulesIT.RULES).get("groups"))) {
      groups.add(String.valueOf(AlertRulesIT.map(g).get("name")));
      rules += AlertRulesIT.list(AlertRulesIT.map(g).get("rules")).size();
    }
    int expectedRules = rules;
    JsonNode loaded =
        Await.value(
            "every rule group loaded and evaluated once",
            Duration.ofSeconds(60),
            () -> prometheus.get("/api/v1/rules"),
            answer -> answer != null && evaluated(answer, expectedRules),
            () -> "log: " + prometheus.logText());
    Set<String> loadedGroups = new TreeSet<>();
    for (JsonNode group : loaded.path("data").path("groups")) {
      loadedGroups.add(group.path("name").asText());
      for (JsonNode rule : group.path("rules")) {
        assertEquals(
            "ok",
            rule.path("health").asText(),
            rule.path("name").asText() + ": " + rule.path("lastError").asText());
      }
    }
    assertEquals(groups, loadedGroups);
    // A healthy proxy fires nothing: the two rules without "for" would say audit records were lost.
    JsonNode alerts = prometheus.get("/api/v1/alerts").path("data").path("alerts");
    for (JsonNode alert : alerts) {
      if ("firing".equals(alert.path("state").asText())) {
        fail("alert firing on a healthy proxy: " + alert);
      }
    }
  }

  /** Importable anywhere: it names no data source of ours and loads nothing from the network. */
  @Test
  void dashboardIsSelfContained() throws Exception {
    JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
    assertTrue(dashboard.path("schemaVersion").asInt() >= 36, "schemaVersion");
    assertFalse(
        Files.readString(DASHBOARD).matches("(?s).*https?://.*"), "a link or URL in the dashboard");
    boolean datasourceVariable = false;
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      datasourceVariable |=
          "datasource".equals(variable.path("type").asText())
              && "prometheus".equals(variable.path("query").asText());
    }
    assertTrue(datasourceVariable, "a Prometheus data source variable");
    Set<Long> ids = new TreeSet<>();
    for (JsonNode panel : panels()) {
      assertTrue(ids.add(panel.path("id").asLong()), "duplicate panel id " + panel.path("id"));
      if (!"row".equals(panel.path("type").asText())) {
        assertEquals(
            "${datasource}", panel.path("datasource").path("uid").asText(), panel.toString());
        assertFalse(panel.path("targets").isEmpty(), panel.path("title").asText());
      }
    }
  }

  /** An answered query, a policy refusal, an authentication failure and a quota refusal. */
  private static void traffic() throws Exception {
    assertEquals(7, spark.range(7).collectAsList().size());
    assertThrows(
        Exception.class,
        () -> spark.sql("SELECT reflect('java.lang.System','getenv')").collectAsList());
    assertEquals(Status.Code.UNAUTHENTICATED, rawCall("not-a-token"));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, rawCall(QUOTA_PROBE_TOKEN));
  }

  private static Status.Code rawCall(String token) throws Exception {
    ManagedChannel channel =
        Channels.tls(proxy.port(), certs.caCert()).intercept(Channels.bearer(token)).build();
    try {
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () -> new ConnectRequests(channel, "someone").sql("SELECT 1"));
      return e.getStatus().getCode();
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static boolean evaluated(JsonNode answer, int rules) {
    int seen = 0;
    for (JsonNode group : answer.path("data").path("groups")) {
      for (JsonNode rule : group.path("rules")) {
        if (rule.path("lastEvaluation").asText("").startsWith("0001-")) {
          return false; // not evaluated yet
        }
        seen++;
      }
    }
    return seen == rules;
  }

  static List<JsonNode> panels() throws Exception {
    JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
    List<JsonNode> panels = new ArrayList<>();
    for (JsonNode p : dashboard.path("panels")) {
      panels.add(p);
      p.path("panels").forEach(panels::add); // a collapsed row holds its panels
    }
    return panels;
  }

  /** Grafana's variables as the dashboard's defaults ("All") and a one-minute rate window. */
  static String substitute(String expr) {
    return expr.replace("$__rate_interval", "1m")
        .replaceAll("\\$\\{?(job|instance|pool)\\}?", ".*");
  }

  private static void await(String query, double atLeast) throws Exception {
    Await.value(
        query + " to reach at least " + atLeast,
        Duration.ofSeconds(60),
        () -> prometheus.value(query),
        value -> value >= atLeast,
        () -> "log: " + prometheus.logText());
  }
}
