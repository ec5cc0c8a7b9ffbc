package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.sparkgate.e2e.SparkConnectServerProcess;
import io.sparkgate.e2e.SparkServerExtension;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.MetricsScrape;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;

/**
 * Which errors PySpark and the JVM client retry through Sparkgate, and for how long (issue 47 part 3): each
 * client runs one query per case in a process of its own, the proxy counts the attempts (its metrics: calls by
 * method and status code, overload refusals), and the client program times the query from its start to the
 * error it shows. The contract (docs/errors.md): a policy refusal and a wrong token are tried once and shown at
 * once; an overload (RESOURCE_EXHAUSTED with RetryInfo) is retried, after the delay, by the clients that read
 * RetryInfo and shown at once by the others, and either way ends with the proxy's message; a backend that is
 * down (UNAVAILABLE) is retried as the client's retry policy says. The last two run with a short retry policy
 * set the way a user sets one, so that they take seconds, not the defaults' ten minutes. The measured table is
 * in docs/clients/README.md, and the last test checks that its attempt counts are still what was measured.
 */
@ExtendWith(SparkServerExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class RetryContractIT {
  /** The short retry policy of the overload and backend-down cases: waits of 200, 400 and 800 ms. */
  static final int RETRIES = 3;

  static final long INITIAL_BACKOFF_MS = 200;
  static final double MULTIPLIER = 2.0;
  static final long CONFIGURED_WAIT_MS = 200 + 400 + 800;

  /** What the proxy's overload refusal asks a client to wait (CallLimiter.RETRY_AFTER). */
  static final long RETRY_INFO_MS = 1_000;

  /**
   * "At once": against the minutes of a retry schedule. Generous: a JVM client's first call (TLS, class
   * loading) took 10 s on a 2-core machine at load 20.
   */
  static final long AT_ONCE_MS = 30_000;

  static final Path DOC = Path.of("docs", "clients", "README.md");
  static final String DOC_HEADING = "## Which errors each client retries";

  private static final Path PROGRAM = Path.of("src", "test", "python", "compat", "retry_client.py");
  private static final Duration RUN_TIMEOUT = Duration.ofMinutes(3);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The cases, as the doc's table names them. */
  enum Case {
    POLICY_REFUSAL("policy refusal (PERMISSION_DENIED)", "PERMISSION_DENIED"),
    WRONG_TOKEN("wrong token (UNAUTHENTICATED)", "UNAUTHENTICATED"),
    OVERLOADED("overload (RESOURCE_EXHAUSTED, RetryInfo 1 s)", "RESOURCE_EXHAUSTED"),
    BACKEND_DOWN("backend down (UNAVAILABLE)", "UNAVAILABLE");

    final String label;
    final String code;

    Case(String label, String code) {
      this.label = label;
      this.code = code;
    }
  }

  /**
   * One client under test: how to start its program, and whether it retries an error carrying RetryInfo
   * (PySpark and the JVM client from 4.1 on, from their sources).
   */
  record RetryClient(String name, String version, boolean readsRetryInfo, boolean python) {
    static RetryClient pyspark(String version) {
      return new RetryClient(
          "PySpark " + version,
          version,
          !version.startsWith("3.") && !version.startsWith("4.0"),
          true);
    }

    static RetryClient jvm(String version) {
      return new RetryClient("JVM client " + version, version, !version.startsWith("4.0"), false);
    }
  }

  static final List<RetryClient> CLIENTS =
      List.of(
          RetryClient.pyspark("3.5.9"),
          RetryClient.pyspark("4.0.5"),
          RetryClient.pyspark("4.1.4"),
          RetryClient.jvm("4.0.0"),
          RetryClient.jvm("4.2.0"));

  /** What one run showed: the attempts the proxy counted, and what the client reported. */
  record Measured(
      RetryClient client,
      Case c,
      long attempts,
      String byMethod,
      long millis,
      String outcome,
      String error,
      String detail) {
    /** The detail on one line, cut to 200 characters. */
    String firstLine() {
      String d = detail.strip().replaceAll("\\s+", " ");
      return d.length() <= 200 ? d : d.substring(0, 200) + "...";
    }
  }

  private static final List<Measured> MEASURED = new ArrayList<>();

  private static CompatProxy spark;
  private static CompatProxy down;
  private static CompatProxy overloaded;
  private static ManagedChannel holderChannel;
  private static ClientCall<byte[], byte[]> held;

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    PySparkClient.requireVenv();
    for (RetryClient c : CLIENTS) {
      if (!c.python()) {
        new JvmClient(c.version())
            .unavailable()
            .ifPresent(
                why -> {
                  throw new IllegalStateException(c.name() + ": " + why);
                });
      }
    }
    Path dir =
        Files.createDirectories(
            Path.of("target", "compat", "retries-" + UUID.randomUUID()).toAbsolutePath());
    List<String> admin = List.of("admin: {address: 127.0.0.1, port: 0}");
    spark =
        CompatProxy.start(
            dir.resolve("spark"),
            server.port(),
            server.sparkVersion(),
            CompatProxy.Options.withConfig(admin));
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    down =
        CompatProxy.start(
            dir.resolve("down"),
            closedPort,
            server.sparkVersion(),
            CompatProxy.Options.withConfig(admin));
    // One call at a time, and the test holds that one: every client call is refused as overload.
    overloaded =
        CompatProxy.start(
            dir.resolve("overloaded"),
            server.port(),
            server.sparkVersion(),
            CompatProxy.Options.withConfig(List.of(admin.get(0), "limits: {max_calls: 1}")));
    holdTheOnlyCall(overloaded);
  }

  /** Opens an ExecutePlan on {@code proxy} that sends nothing: it counts against max_calls until closed. */
  private static void holdTheOnlyCall(CompatProxy proxy) throws Exception {
    Target t = proxy.target();
    holderChannel = Channels.tls(t.port(), t.caPem()).build();
    java.util.concurrent.atomic.AtomicBoolean heldClosed =
        new java.util.concurrent.atomic.AtomicBoolean();
    held = holdOne(t, heldClosed);
    Await.until(
        "the proxy refusing a second call as overload",
        () -> {
          // A probe that reached the proxy before the held call took the only slot, and the held
          // call was refused instead: hold another.
          if (heldClosed.getAndSet(false)) held = holdOne(t, heldClosed);
          try {
            ClientCalls.blockingUnaryCall(
                ClientInterceptors.intercept(holderChannel, Channels.bearer(t.token())),
                TestMethods.get("Config"),
                CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                new byte[0]);
            return false;
          } catch (StatusRuntimeException e) {
            return e.getStatus().getCode() == Status.Code.RESOURCE_EXHAUSTED;
          }
        });
  }

  /** An ExecutePlan that sends nothing; {@code closed} is set if the proxy ends it. */
  private static ClientCall<byte[], byte[]> holdOne(
      Target t, java.util.concurrent.atomic.AtomicBoolean closed) {
    ClientCall<byte[], byte[]> call =
        ClientInterceptors.intercept(holderChannel, Channels.bearer(t.token()))
            .newCall(TestMethods.get("ExecutePlan"), CallOptions.DEFAULT);
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onClose(Status status, Metadata trailers) {
            closed.set(true);
          }
        },
        new Metadata());
    call.request(1);
    return call;
  }

  @AfterAll
  static void stop() throws Exception {
    if (held != null) {
      held.cancel("test over", null);
    }
    if (holderChannel != null) {
      holderChannel.shutdownNow();
    }
    for (CompatProxy p : new CompatProxy[] {spark, down, overloaded}) {
      if (p != null) {
        p.close();
      }
    }
    if (!MEASURED.isEmpty()) {
      String table = table(MEASURED);
      System.out.println("RetryContractIT:\n" + table);
      Files.writeString(Path.of("target", "compat", "retry-contract.md"), table);
    }
  }

  @Test
  @Order(1)
  void aPolicyRefusal_isTriedOnce_andShownAtOnce() throws Exception {
    checkEach(
        Case.POLICY_REFUSAL,
        spark,
        spark.target(),
        "reflect",
        false,
        m -> {
          assertTrue(m.detail().contains("no-reflection"), m.toString());
          assertEquals(1, m.attempts(), m.toString());
          assertTrue(m.millis() < AT_ONCE_MS, m.toString());
        });
  }

  @Test
  @Order(2)
  void aWrongToken_isTriedOnce_andShownAtOnce() throws Exception {
    Target t = spark.target();
    String wrongToken = "not-" + t.token();
    Target wrong =
        new Target(
            t.host(),
            t.port(),
            wrongToken,
            t.caPem(),
            t.trustStore(),
            t.trustStorePassword(),
            t.serverVersion());
    checkEach(
        Case.WRONG_TOKEN,
        spark,
        wrong,
        "range",
        false,
        m -> {
          assertTrue(m.detail().toLowerCase(Locale.ROOT).contains("unauthenticated"), m.toString());
          assertFalse(m.detail().contains(wrongToken), "the client's error repeats the token");
          assertEquals(1, m.attempts(), m.toString());
          assertTrue(m.millis() < AT_ONCE_MS, m.toString());
        });
  }

  @Test
  @Order(3)
  void anOverload_isRetriedAfterItsDelay_onlyByClientsThatReadRetryInfo() throws Exception {
    checkEach(
        Case.OVERLOADED,
        overloaded,
        overloaded.target(),
        "range",
        true,
        m -> {
          assertTrue(m.detail().contains("SPARKGATE_OVERLOADED"), m.toString());
          if (m.client().readsRetryInfo()) {
            assertEquals(1 + RETRIES, m.attempts(), m.toString());
            // Each wait is the server's 1 s, not the configured 200-800 ms backoff.
            assertTrue(m.millis() >= RETRIES * RETRY_INFO_MS, m.toString());
          } else {
            assertEquals(1, m.attempts(), m.toString());
            assertTrue(m.millis() < AT_ONCE_MS, m.toString());
          }
          assertTrue(m.millis() < RUN_TIMEOUT.toMillis() / 2, "bounded: " + m);
        });
  }

  @Test
  @Order(4)
  void aBackendThatIsDown_isRetriedAsTheClientsPolicySays() throws Exception {
    checkEach(
        Case.BACKEND_DOWN,
        down,
        down.target(),
        "range",
        true,
        m -> {
          // The proxy's own answer once it knows the backend is down, or the client's "retries
          // exceeded"; the status itself is what the proxy counted (UNAVAILABLE).
          assertTrue(
              m.detail().contains("SPARKGATE_NO_BACKEND")
                  || m.detail().contains("RETRIES_EXCEEDED"),
              m.toString());
          assertEquals(1 + RETRIES, m.attempts(), m.toString());
          assertTrue(m.millis() >= CONFIGURED_WAIT_MS, m.toString());
          assertTrue(m.millis() < RUN_TIMEOUT.toMillis() / 2, "bounded: " + m);
        });
  }

  /** Measures every client on one case, then checks each: one client's failure does not hide the others'. */
  private static void checkEach(
      Case c,
      CompatProxy proxy,
      Target target,
      String action,
      boolean shortRetries,
      java.util.function.Consumer<Measured> check)
      throws Exception {
    List<Executable> checks = new ArrayList<>();
    for (RetryClient client : CLIENTS) {
      Measured m = measure(client, c, proxy, target, action, shortRetries);
      checks.add(
          () -> {
            assertEquals("error", m.outcome(), m.toString());
            check.accept(m);
          });
    }
    assertAll(c.label, checks);
  }

  /** docs/clients/README.md's table still has, for every client and case, the attempts measured here. */
  @Test
  @Order(5)
  void docs_tableHasTheMeasuredAttempts() throws Exception {
    String doc = Files.readString(DOC, StandardCharsets.UTF_8);
    int at = doc.indexOf(DOC_HEADING);
    assertTrue(at >= 0, DOC + " has no heading " + DOC_HEADING);
    String section = doc.substring(at);
    assertEquals(CLIENTS.size() * Case.values().length, MEASURED.size(), "cases measured");
    for (Measured m : MEASURED) {
      String row = "| " + m.client().name() + " | " + m.c().label + " | " + m.attempts() + " |";
      assertTrue(
          section.contains(row), DOC + " lacks the row starting " + row + "\n" + table(MEASURED));
    }
  }

  /** Runs one client once against {@code target} and counts, at {@code proxy}, the calls it made. */
  private static Measured measure(
      RetryClient client,
      Case c,
      CompatProxy proxy,
      Target target,
      String action,
      boolean shortRetries)
      throws Exception {
    Map<String, Double> before = MetricsScrape.get(proxy.metricsPort());
    JsonNode result = run(client, target, action, shortRetries);
    // The proxy counts a call as it ends, which the client may see first: wait for the counts to
    // settle.
    Map<String, Double> after = settled(proxy.metricsPort());
    // Calls the proxy ended with the case's status, by method. Release* are the client's clean-up
    // of a
    // failed operation (some send them in the background), not attempts at the query.
    Map<String, Long> byMethod = new java.util.TreeMap<>();
    String prefix = "sparkgate_calls_total{code=" + c.code + ",method=";
    for (String key : after.keySet()) {
      long n = delta(before, after, key);
      if (key.startsWith(prefix) && n > 0) {
        byMethod.put(key.substring(prefix.length(), key.length() - 1), n);
      }
    }
    // The query's attempts: PySpark's ExecutePlan and the ReattachExecutes that retry it; the JVM
    // client
    // sends a Config for the session's time zone beside its ExecutePlan and fails on whichever
    // fails
    // first. (PySpark 4.1's Config calls, for the plan-compression threshold, come three to a
    // query.)
    long query =
        byMethod.getOrDefault("ExecutePlan", 0L) + byMethod.getOrDefault("ReattachExecute", 0L);
    long attempts = client.python() ? query : Math.max(query, byMethod.getOrDefault("Config", 0L));
    Measured m =
        new Measured(
            client,
            c,
            attempts,
            byMethod.toString(),
            result.path("millis").asLong(-1),
            result.path("outcome").asText(),
            result.path("error").asText(),
            result.path("detail").asText());
    System.out.printf(
        "RetryContractIT: %s, %s: %d attempt(s) %s in %d ms: %s %s%n",
        client.name(), c.label, m.attempts(), m.byMethod(), m.millis(), m.error(), m.firstLine());
    synchronized (MEASURED) {
      MEASURED.add(m);
    }
    return m;
  }

  private static long delta(Map<String, Double> before, Map<String, Double> after, String key) {
    return Math.round(after.getOrDefault(key, 0.0) - before.getOrDefault(key, 0.0));
  }

  private static Map<String, Double> settled(int port) throws Exception {
    Map<String, Double> last = MetricsScrape.get(port);
    for (int i = 0; i < 20; i++) {
      Thread.sleep(250);
      Map<String, Double> now = MetricsScrape.get(port);
      if (counts(now).equals(counts(last))) {
        return now;
      }
      last = now;
    }
    return last;
  }

  private static Map<String, Double> counts(Map<String, Double> samples) {
    Map<String, Double> counts = new java.util.TreeMap<>();
    samples.forEach(
        (k, v) -> {
          if (k.startsWith("sparkgate_calls_total") || k.startsWith("sparkgate_overload_")) {
            counts.put(k, v);
          }
        });
    return counts;
  }

  /** Starts the client's program for one action and returns the JSON line it printed. */
  private static JsonNode run(
      RetryClient client, Target target, String action, boolean shortRetries) throws Exception {
    Path dir =
        Files.createDirectories(
            Path.of("target", "compat", "runs", "retry-" + UUID.randomUUID()).toAbsolutePath());
    ProcessBuilder builder;
    if (client.python()) {
      PythonEnvs.Env env = PySparkClient.full(client.version()).env();
      List<String> command = new ArrayList<>();
      command.add(env.python().toString());
      command.add(PROGRAM.toAbsolutePath().toString());
      command.addAll(
          List.of(
              "--host",
              target.host(),
              "--port",
              Integer.toString(target.port()),
              "--ca",
              target.caPem().toAbsolutePath().toString()));
      if (shortRetries) {
        command.addAll(
            List.of(
                "--max-retries",
                Integer.toString(RETRIES),
                "--initial-backoff",
                Long.toString(INITIAL_BACKOFF_MS),
                "--backoff-multiplier",
                Double.toString(MULTIPLIER)));
      }
      command.add(action);
      builder = new ProcessBuilder(command);
      Map<String, String> environment = builder.environment();
      PySparkClient.clearInherited(environment);
      environment.put(PySparkClient.TOKEN_ENV, target.token());
    } else {
      List<String> args = new ArrayList<>(List.of(JvmClientProgram.RETRY, action));
      if (shortRetries) {
        args.addAll(
            List.of(
                Integer.toString(RETRIES),
                Long.toString(INITIAL_BACKOFF_MS),
                Double.toString(MULTIPLIER)));
      }
      builder = new JvmClient(client.version()).processBuilder(target, args);
    }
    Path stdout = dir.resolve("stdout.txt");
    Path stderr = dir.resolve("stderr.txt");
    Process process =
        builder
            .directory(dir.toFile())
            .redirectOutput(stdout.toFile())
            .redirectError(stderr.toFile())
            .start();
    if (!process.waitFor(RUN_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      throw new AssertionError(
          client.name() + " " + action + " still ran after " + RUN_TIMEOUT + ": " + tail(stderr));
    }
    for (String line : Files.readAllLines(stdout, StandardCharsets.UTF_8)) {
      if (line.startsWith("{") && line.contains("\"outcome\"")) {
        return JSON.readTree(line);
      }
    }
    throw new AssertionError(
        client.name()
            + " "
            + action
            + " reported nothing (exit "
            + process.exitValue()
            + "):\n"
            + tail(stderr));
  }

  private static String tail(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }

  /** The measured table, in the doc's shape. */
  static String table(List<Measured> measured) {
    StringBuilder b =
        new StringBuilder(
            "| client | case | attempts | calls at the proxy | time to give up | what the user sees |\n"
                + "|---|---|---|---|---|---|\n");
    for (Measured m : measured) {
      b.append("| ")
          .append(m.client().name())
          .append(" | ")
          .append(m.c().label)
          .append(" | ")
          .append(m.attempts())
          .append(" | ")
          .append(m.byMethod().replaceAll("[{}]", "").replace("=", " "))
          .append(" | ")
          .append(String.format(Locale.ROOT, "%.1f s", m.millis() / 1000.0))
          .append(" | ")
          .append(m.error())
          .append(": ")
          .append(m.firstLine().replace("|", "\\|"))
          .append(" |\n");
    }
    return b.toString();
  }
}
