package io.sparkgate.bench;

import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.OpaConfig;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.opa.Answer;
import io.sparkgate.opa.InputDocument;
import io.sparkgate.opa.OpaClient;
import io.sparkgate.opa.Question;
import java.io.File;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What asking OPA adds to one decision, against a real OPA server ({@code opa run --server} on loopback, the
 * shipped example bundle, decision logs on as docs/opa.md recommends): {@code hit}, the same question again,
 * answered from the cache (the input document built, written as canonical JSON and hashed); {@code miss}, a
 * question the cache has not seen (a different pool each time), so the document is POSTed and OPA evaluates
 * it. The question is a SQL join of two tables as the inspector reads it. The OPA binary comes from {@code
 * -Dopa=PATH} (bench/opa.sh builds it as the tests do).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class OpaBench {
  @Param({"hit", "miss"})
  public String cache;

  private Process opa;
  private OpaClient client;
  private Question question;
  private Facts facts;
  private BackendProfile profile;
  private long n;

  @Setup(Level.Trial)
  public void start() throws Exception {
    // bench/opa.sh runs from the repository's root, the bench module's tests from bench/; the
    // tests'
    // Go tools script builds OPA into the root's target/tools (.ci/run has it built before this
    // runs).
    Path root = Files.exists(Path.of("src/test/tools/go-tool.sh")) ? Path.of("") : Path.of("..");
    String binary = System.getProperty("opa", root.resolve("target/tools/bin/opa").toString());
    if (!Files.isExecutable(Path.of(binary))) {
      int built =
          new ProcessBuilder("bash", root.resolve("src/test/tools/go-tool.sh").toString(), "opa")
              .inheritIO()
              .start()
              .waitFor();
      if (built != 0) throw new IllegalStateException("src/test/tools/go-tool.sh opa failed");
    }
    int port;
    try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    Path bundle =
        Path.of(
            System.getProperty(
                "bundle", root.resolve("policies/opa/sparkgate/allow.rego").toString()));
    opa =
        new ProcessBuilder(
                binary,
                "run",
                "--server",
                "--addr",
                "127.0.0.1:" + port,
                "--log-level",
                "error",
                "--set",
                "decision_logs.console=true",
                bundle.toString())
            .redirectErrorStream(true)
            .redirectOutput(new File("/dev/null"))
            .start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
        break;
      } catch (java.io.IOException notYet) {
        if (System.nanoTime() > deadline) throw new IllegalStateException("OPA did not start");
        Thread.sleep(20);
      }
    }
    client =
        new OpaClient(
            new OpaConfig(
                URI.create("http://127.0.0.1:" + port),
                Optional.empty(),
                Optional.empty(),
                "sparkgate/allow",
                Duration.ofSeconds(2),
                false,
                OpaConfig.DEFAULT_CACHE_ENTRIES,
                Duration.ofMinutes(10)),
            new InputDocument(false, new SecretPatterns(AuthConfig.DEFAULT_SECRET_PATTERNS)));
    profile =
        new BackendProfile(
            "4.0.0",
            List.of(),
            Map.of("iceberg", "org.apache.iceberg.spark.SparkCatalog"),
            "spark_catalog");
    facts =
        new Inspector()
            .inspectSql(
                "SELECT p.id, c.day FROM finance.payroll p JOIN shared.calendar c ON p.id = c.id"
                    + " WHERE p.amount > 100",
                profile.freshSession());
    question = question("default");
    if (client.ask(question).outcome() != Answer.Outcome.ALLOW) {
      throw new IllegalStateException("OPA did not allow the benchmark's question");
    }
  }

  private Question question(String pool) {
    return new Question(
        "ExecutePlan",
        "alice",
        List.of("analysts"),
        Optional.empty(),
        "jwt",
        pool,
        profile,
        facts,
        null,
        "allow",
        "default");
  }

  @Benchmark
  public Answer ask() {
    return client.ask("hit".equals(cache) ? question : question("pool-" + n++));
  }

  @TearDown(Level.Trial)
  public void stop() throws Exception {
    client.close();
    opa.destroy();
    opa.waitFor(5, TimeUnit.SECONDS);
  }
}
