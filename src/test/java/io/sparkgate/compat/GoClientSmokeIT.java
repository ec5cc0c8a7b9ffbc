package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.Sparkgate;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.e2e.SparkConnectServerProcess;
import io.sparkgate.e2e.SparkServerExtension;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Toolchains;
import io.sparkgate.tls.DevCertificates;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Go client ({@link GoClient}) through Sparkgate with TLS, a static token and policies/shared-server.yaml,
 * to the shared Spark 4.0 server, on every scenario; the same program straight to the server is the baseline.
 * Until the compatibility suite runs every client against every Spark version, this keeps the Go client's
 * column honest.
 */
@ExtendWith(SparkServerExtension.class)
@Timeout(
    value = 20,
    unit = TimeUnit.MINUTES) // the first go build downloads and compiles the modules
class GoClientSmokeIT {
  private static final String TOKEN = "go-smoke-" + UUID.randomUUID().toString().replace("-", "");
  private static final List<Scenario> ALL = Arrays.asList(Scenario.values());

  private static final GoClient CLIENT = new GoClient();
  private static SparkConnectServerProcess server;
  private static DevCertificates.Generated certs;
  private static Sparkgate proxy;
  private static Path auditFile;
  private static Sparkgate downProxy;
  private static Path downDir;

  @BeforeAll
  static void start(SparkConnectServerProcess spark) throws Exception {
    Toolchains.requireGo("to build the Spark Connect Go client");
    server = spark;
    Path dir =
        Files.createDirectories(Path.of("target", "e2e", "go-smoke-" + UUID.randomUUID()))
            .toAbsolutePath();
    certs = DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    auditFile = dir.resolve("audit.jsonl");
    proxy = startProxy(dir, spark.port());
    // The same proxy in front of a port nothing listens on: a backend that is down.
    downDir = Files.createDirectories(dir.resolve("backend-down"));
    Files.createSymbolicLink(downDir.resolve("certs"), dir.resolve("certs"));
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    downProxy = startProxy(downDir, closedPort);
  }

  private static Sparkgate startProxy(Path dir, int backendPort) throws Exception {
    String sha =
        HexFormat.of()
            .formatHex(
                MessageDigest.getInstance("SHA-256")
                    .digest(TOKEN.getBytes(StandardCharsets.UTF_8)));
    Path config = dir.resolve("sparkgate.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0}",
            "tls: {cert_file: certs/server.pem, key_file: certs/server.key}",
            "backend: {address: '127.0.0.1:" + backendPort + "'}",
            "auth:",
            "  static_tokens:",
            "    - {sha256: " + sha + ", principal: go-user, groups: [analysts]}",
            "policy: {file: '" + Path.of("policies", "shared-server.yaml").toAbsolutePath() + "'}",
            "audit: {file: audit.jsonl}",
            ""));
    return Sparkgate.start(ProxyConfig.load(config));
  }

  @AfterAll
  static void stop() {
    if (proxy != null) {
      proxy.close();
    }
    if (downProxy != null) {
      downProxy.close();
    }
  }

  @Test
  void withoutTheCaInSslCertFile_theGoClientRejectsTheProxysCertificate() throws Exception {
    List<Outcome> outcomes = CLIENT.run(proxyTarget(), List.of(Scenario.VERSION), null, List.of());
    assertEquals("fail", outcomes.get(0).outcome(), outcomes.toString());
    assertTrue(
        outcomes.get(0).detail().contains("certificate signed by unknown authority"),
        outcomes.toString());
  }

  @Test
  void aWrongToken_isUnauthenticated_notRetried() throws Exception {
    Target wrong =
        new Target(
            "localhost",
            proxy.port(),
            "not-" + TOKEN,
            certs.caCert(),
            null,
            null,
            server.sparkVersion());
    Outcome o = CLIENT.run(wrong, List.of(Scenario.VERSION)).get(0);
    assertEquals("fail", o.outcome(), o.toString());
    assertTrue(o.detail().contains("[Unauthenticated]"), o.toString());
    assertFalse(o.detail().contains("not-" + TOKEN), "the client's error repeats the token");
  }

  // --- retries (issue 47 part 3), counted at the proxy: one audit record per ExecutePlan attempt
  // ---------------

  @Test
  void aPolicyRefusal_isNotRetried_evenByAReattachableSession() throws Exception {
    String marker = "\"rule\":\"no-reflection\"";
    long before = executePlans(auditFile, marker);
    Outcome o =
        CLIENT
            .run(proxyTarget(), List.of(Scenario.REFLECT), certs.caCert(), List.of("-reattach"))
            .get(0);
    assertEquals("refused", o.outcome(), o.toString());
    Await.until("the refusal's audit record", () -> executePlans(auditFile, marker) > before);
    // A reattachable session of this client re-sends an ExecutePlan that failed before its first
    // response, whatever the status, before it looks at the status (spark/client/retry.go,
    // retriableExecutePlanClient.Recv), and then gives up on PERMISSION_DENIED. That blind re-send,
    // same operation id, is refused again when it reaches the proxy before the client cancels it;
    // what must not happen is a retry loop, or a new operation.
    List<String> refusals =
        AuditLines.complete(auditFile).stream()
            .filter(line -> line.contains("ExecutePlan\"") && line.contains(marker))
            .skip(before)
            .toList();
    assertTrue(refusals.size() <= 2, refusals.size() + " refusals: " + refusals);
    assertEquals(
        1,
        refusals.stream().map(GoClientSmokeIT::operationId).distinct().count(),
        "refusals of more than one operation: " + refusals);
  }

  private static String operationId(String auditLine) {
    try {
      return new com.fasterxml.jackson.databind.ObjectMapper()
          .readTree(auditLine)
          .path("operation_id")
          .asText();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("not JSON: " + auditLine, e);
    }
  }

  @Test
  void aBackendThatIsDown_isUnavailable_retriedOnlyByAReattachableSession() throws Exception {
    Path audit = downDir.resolve("audit.jsonl");
    Target down =
        new Target(
            "localhost",
            downProxy.port(),
            TOKEN,
            certs.caCert(),
            null,
            null,
            server.sparkVersion());
    String unavailable = "\"status\":\"UNAVAILABLE\"";

    // The client's default: no retries at all.
    long start = System.nanoTime();
    Outcome once = CLIENT.run(down, List.of(Scenario.VERSION)).get(0);
    long onceMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertEquals("fail", once.outcome(), once.toString());
    assertTrue(once.detail().contains("[Unavailable]"), once.toString());
    Await.until("the first attempt's audit record", () -> executePlans(audit, unavailable) >= 1);
    assertEquals(1, executePlans(audit, unavailable), "the default session retried");

    // Reattachable: retried with backoff (50 ms, x4) until the scenario's 5 s limit ends the call;
    // the client sleeps between attempts without watching that limit, so the program ends after its
    // next backoff.
    start = System.nanoTime();
    Outcome retried =
        CLIENT
            .run(
                down,
                List.of(Scenario.VERSION),
                certs.caCert(),
                List.of("-reattach", "-scenario-timeout", "5s"))
            .get(0);
    long retriedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertEquals("fail", retried.outcome(), retried.toString());
    Await.until("the retries' audit records", () -> executePlans(audit, unavailable) >= 3);
    long attempts = executePlans(audit, unavailable) - 1;
    System.out.printf(
        "GoClientSmokeIT: backend down: default session 1 attempt in %d ms; reattachable session %d attempts"
            + " in %d ms (%s)%n",
        onceMillis, attempts, retriedMillis, retried.detail());
    assertTrue(attempts >= 3, attempts + " attempts");
  }

  /** ExecutePlan records in a proxy's audit log holding {@code marker}. */
  private static long executePlans(Path audit, String marker) throws Exception {
    return AuditLines.complete(audit).stream()
        .filter(line -> line.contains("ExecutePlan\"") && line.contains(marker))
        .count();
  }

  private static Target proxyTarget() {
    return new Target(
        "localhost", proxy.port(), TOKEN, certs.caCert(), null, null, server.sparkVersion());
  }

  private static Map<Scenario, Outcome> byScenario(List<Outcome> outcomes) {
    assertEquals(ALL, outcomes.stream().map(Outcome::scenario).toList());
    return outcomes.stream()
        .collect(
            Collectors.toMap(
                Outcome::scenario,
                Function.identity(),
                (a, b) -> a,
                () -> new java.util.EnumMap<>(Scenario.class)));
  }
}
