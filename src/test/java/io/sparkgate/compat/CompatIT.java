package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sparkgate.compat.CompatResults.PairResult;
import io.sparkgate.compat.CompatResults.ScenarioResult;
import io.sparkgate.compat.CompatResults.ServerRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Every client against every Spark server version, through Sparkgate as users meet it (TLS with a private
 * CA, a bearer token in the URL, the shipped shared-server policy, audit on). One server at a time, shared by
 * all clients; one client process per (client, server) pair running every scenario in one session.
 *
 * <p>A scenario that fails through the proxy is run again straight to the server: failing there too, it is
 * Spark's own client/server version skew (reported, not a test failure); working there, it is Sparkgate's
 * doing and fails the test. Results go to {@code target/compat/results.json} and the README's table.
 */
final class CompatIT {

  private static final Path WORK = Path.of("target", "compat");
  private static final List<Scenario> PROBE =
      List.of(Scenario.VERSION, Scenario.RANGE, Scenario.SQL);
  static final String README_PROPERTY = "sparkgate.compat.readme";

  private final boolean underCi = "1".equals(System.getenv("SPARKGATE_CI"));

  @Test
  void everyClient_everySparkServer_throughSparkgate() throws Exception {
    long started = System.nanoTime();
    Verdict verdict = Verdict.forPolicy(CompatProxy.POLICY);
    List<ClientUnderTest> clients = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    List<PairResult> pairs = new ArrayList<>();
    for (ClientUnderTest client : Clients.all()) {
      Optional<String> why = client.unavailable();
      if (why.isPresent()) {
        problems.add(client.name() + " unavailable: " + why.get());
        pairs.add(
            new PairResult(client.name(), "*", "client-unavailable", why.get(), 0, 0, List.of()));
      } else {
        clients.add(client);
      }
    }
    List<ServerRun> servers = new ArrayList<>();
    for (SparkVersionServer server : CompatServers.all()) {
      Optional<String> why = server.unavailable();
      if (why.isPresent()) {
        problems.add("Spark " + server.version() + " unavailable: " + why.get());
        servers.add(new ServerRun(server.version(), "unavailable", why.get(), 0, 0));
        continue;
      }
      servers.add(runServer(server, clients, verdict, pairs));
    }

    CompatResults results =
        new CompatResults(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(), servers, pairs);
    results.write(CompatResults.FILE);
    String table = CompatTable.markdown(results);
    Files.writeString(WORK.resolve("compat-table.md"), table);
    String readme = System.getProperty(README_PROPERTY, "");
    if (!readme.isEmpty()) {
      CompatTable.rewrite(Path.of(readme), table);
    }
    System.out.printf(
        "CompatIT: %d pairs in %d s; table:%n%s%n",
        pairs.size(), (System.nanoTime() - started) / 1_000_000_000L, table);

    if (underCi && !problems.isEmpty()) {
      fail("SPARKGATE_CI=1 needs every client and server: " + problems);
    }
    List<String> sparkgateFailures = new ArrayList<>();
    for (PairResult pair : pairs) {
      for (ScenarioResult s : pair.scenarios()) {
        if (CompatResults.CAUSE_SPARKGATE.equals(s.cause())) {
          sparkgateFailures.add(
              pair.client()
                  + " on Spark "
                  + pair.server()
                  + ", "
                  + s.scenario()
                  + ": "
                  + s.reason());
        }
      }
    }
    assertTrue(
        sparkgateFailures.isEmpty(),
        "failures Sparkgate caused (they work straight to the server):\n"
            + String.join("\n", sparkgateFailures));
    long ranThroughProxy = pairs.stream().filter(p -> "supported".equals(p.support())).count();
    assertTrue(ranThroughProxy > 0, "no pair ran through the proxy: " + problems);
  }

  private ServerRun runServer(
      SparkVersionServer server,
      List<ClientUnderTest> clients,
      Verdict verdict,
      List<PairResult> pairs)
      throws Exception {
    long t0 = System.nanoTime();
    Path dir =
        Files.createTempDirectory(Files.createDirectories(WORK), "spark-" + server.version() + "-");
    try (SparkVersionServer.Running running = server.start(dir.resolve("server"))) {
      long startMillis = (System.nanoTime() - t0) / 1_000_000;
      System.out.printf("CompatIT: Spark %s up in %d ms%n", running.reportedVersion(), startMillis);
      assertEquals(
          server.version(), running.reportedVersion(), "the server is not the version asked for");
      Target direct = Target.direct("localhost", running.port(), server.version());
      try (CompatProxy proxy =
          CompatProxy.start(dir.resolve("proxy"), running.port(), server.version())) {
        for (ClientUnderTest client : clients) {
          pairs.add(runPair(client, server, running, proxy.target(), direct, verdict));
        }
      }
      return new ServerRun(
          server.version(), "ran", "", startMillis, (System.nanoTime() - t0) / 1_000_000);
    }
  }

  private PairResult runPair(
      ClientUnderTest client,
      SparkVersionServer server,
      SparkVersionServer.Running running,
      Target proxied,
      Target direct,
      Verdict verdict)
      throws Exception {
    long t0 = System.nanoTime();
    if (!client.supportedBySpark(server.version())) {
      // One quick look straight at the server, to record what a user of this unsupported pair would
      // see.
      List<Outcome> probe = client.run(direct, PROBE);
      List<ScenarioResult> results = new ArrayList<>();
      for (Outcome o : probe) {
        results.add(
            new ScenarioResult(
                o.scenario().id(),
                o.outcome(),
                scrub(o.detail(), proxied),
                null,
                null,
                null,
                null,
                null));
      }
      long millis = (System.nanoTime() - t0) / 1_000_000;
      log(client, server, "not supported by Spark (direct probe)", millis, probe);
      return new PairResult(
          client.name(),
          server.version(),
          "not-supported-by-spark",
          "direct probe only",
          millis,
          0,
          results);
    }
    long reattachesBefore = running.reattachCount();
    List<Scenario> all = List.of(Scenario.values());
    List<Outcome> outcomes = client.run(proxied, all);
    long reattaches = running.reattachCount() - reattachesBefore;
    List<Scenario> failed = new ArrayList<>();
    for (Outcome o : outcomes) {
      if (verdict.judge(o).failed()) {
        failed.add(o.scenario());
      }
    }
    // Straight to the server, in one more client session: Spark's own skew fails there too.
    List<Outcome> directOutcomes = failed.isEmpty() ? List.of() : client.run(direct, failed);
    List<ScenarioResult> results = new ArrayList<>();
    for (Outcome o : outcomes) {
      Verdict.Judgement j = verdict.judge(o);
      Outcome d =
          directOutcomes.stream()
              .filter(x -> x.scenario() == o.scenario())
              .findFirst()
              .orElse(null);
      String cause = null;
      if (j.failed()) {
        cause =
            d != null && failsDirectlyToo(d)
                ? CompatResults.CAUSE_SPARK_SKEW
                : CompatResults.CAUSE_SPARKGATE;
      }
      results.add(
          new ScenarioResult(
              o.scenario().id(),
              o.outcome(),
              scrub(o.detail(), proxied),
              j.status().name().toLowerCase(java.util.Locale.ROOT),
              scrub(j.reason(), proxied),
              d == null ? null : d.outcome(),
              d == null ? null : scrub(d.detail(), proxied),
              cause));
    }
    long millis = (System.nanoTime() - t0) / 1_000_000;
    log(client, server, "through Sparkgate, " + reattaches + " reattaches", millis, outcomes);
    return new PairResult(
        client.name(), server.version(), "supported", "", millis, reattaches, results);
  }

  /**
   * A working scenario fails directly too when it does not pass there; a refusal scenario, when it cannot even
   * run there (an error without any proxy): only one that runs directly should have been refused by Sparkgate.
   */
  static boolean failsDirectlyToo(Outcome direct) {
    return direct.scenario().refusedBy().isPresent()
        ? !"ran".equals(direct.outcome())
        : !"pass".equals(direct.outcome());
  }

  /** A client may echo its URL in an error; the token never reaches results or logs. */
  private static String scrub(String text, Target target) {
    return text == null || target.token() == null ? text : text.replace(target.token(), "<token>");
  }

  private static void log(
      ClientUnderTest client,
      SparkVersionServer server,
      String how,
      long millis,
      List<Outcome> outcomes) {
    StringBuilder line = new StringBuilder();
    for (Outcome o : outcomes) {
      line.append(' ').append(o.scenario().id()).append('=').append(o.outcome());
    }
    System.out.printf(
        "CompatIT: %s on Spark %s, %s, %d ms:%s%n",
        client.name(), server.version(), how, millis, line);
  }
}
