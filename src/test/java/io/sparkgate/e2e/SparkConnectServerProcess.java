package io.sparkgate.e2e;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.AnalyzePlanResponse;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A real Spark Connect server (plain gRPC, no TLS, no auth) running in a child JVM.
 *
 * <p>The server's classpath (Spark, Scala, Hadoop, its own shaded gRPC...) comes from the separate
 * spark-server/ Maven project and never meets the test JVM's classpath; only the port is shared.
 *
 * <p>Public for the client × Spark version suite (io.sparkgate.compat), which starts one per Spark version.
 */
public final class SparkConnectServerProcess implements AutoCloseable {

  static final String MAIN_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer";

  /**
   * The server's JVM flags (heap, the --add-opens set Spark's launcher passes on JDK 17, ...), one per line. The
   * demo script reads the same file, so both start the server alike. Overridable for runs outside the project dir.
   */
  static final String JVM_OPTIONS_PROPERTY = "sparkgate.sparkServerJvmOptions";

  private static final Path DEFAULT_JVM_OPTIONS = Path.of("spark-server", "jvm.options");

  private static final Duration DEFAULT_STARTUP_TIMEOUT = Duration.ofSeconds(120);
  private static final int LOG_TAIL_LINES = 80;

  private final Process process;
  private final int port;
  private final Path logFile;
  private final String sparkVersion;
  private final Duration startupTime;
  private final Thread shutdownHook;

  private SparkConnectServerProcess(
      Process process,
      int port,
      Path logFile,
      String sparkVersion,
      Duration startupTime,
      Thread shutdownHook) {
    this.process = process;
    this.port = port;
    this.logFile = logFile;
    this.sparkVersion = sparkVersion;
    this.startupTime = startupTime;
    this.shutdownHook = shutdownHook;
  }

  /**
   * Starts a server and blocks until it answers a gRPC call.
   *
   * @param classpathFile file written by {@code dependency:build-classpath} for spark-server/pom.xml
   * @param workDir directory for the log file, warehouse and Spark scratch space (created if missing)
   * @param sparkConf extra Spark configuration, passed as {@code -D} system properties (SparkConf reads them)
   */
  public static SparkConnectServerProcess start(
      Path classpathFile, Path workDir, Map<String, String> sparkConf) {
    return start(classpathFile, workDir, sparkConf, DEFAULT_STARTUP_TIMEOUT);
  }

  public static SparkConnectServerProcess start(
      Path classpathFile, Path workDir, Map<String, String> sparkConf, Duration timeout) {
    return start(classpathFile, workDir, sparkConf, timeout, freePort());
  }

  /** A server on a given port: the one a killed server had, to play a backend that restarts. */
  static SparkConnectServerProcess start(
      Path classpathFile, Path workDir, Map<String, String> sparkConf, Duration timeout, int port) {
    String classpath = readClasspath(classpathFile);
    try {
      Files.createDirectories(workDir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Path logFile = workDir.resolve("spark-connect-server-" + port + ".log");

    Map<String, String> conf = new LinkedHashMap<>();
    conf.put("spark.master", "local[2]");
    conf.put("spark.ui.enabled", "false");
    conf.put("spark.sql.warehouse.dir", workDir.resolve("warehouse").toAbsolutePath().toString());
    conf.put("spark.local.dir", workDir.resolve("local").toAbsolutePath().toString());
    conf.putAll(sparkConf);
    conf.put(
        "spark.connect.grpc.binding.port",
        Integer.toString(port)); // ours to choose, never the caller's

    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(
        jvmOptions(
            Path.of(System.getProperty(JVM_OPTIONS_PROPERTY, DEFAULT_JVM_OPTIONS.toString()))));
    command.add("-Djava.io.tmpdir=" + workDir.toAbsolutePath());
    conf.forEach((key, value) -> command.add("-D" + key + "=" + value));
    command.add("-cp");
    command.add(classpath);
    command.add(MAIN_CLASS);

    long startNanos = System.nanoTime();
    Process process;
    try {
      process =
          new ProcessBuilder(command)
              .directory(workDir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(logFile.toFile())
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("Could not launch the Spark Connect server JVM", e);
    }
    // Safety net: a crashed or interrupted test JVM must not leave a 2 GB Spark driver behind.
    Thread hook =
        new Thread(() -> destroyTree(process), "spark-connect-server-" + port + "-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);

    try {
      String version = awaitReady(process, port, logFile, timeout);
      Duration took = Duration.ofNanos(System.nanoTime() - startNanos);
      return new SparkConnectServerProcess(process, port, logFile, version, took, hook);
    } catch (RuntimeException | Error e) {
      destroyTree(process);
      removeHook(hook);
      throw e;
    }
  }

  public int port() {
    return port;
  }

  /** {@code sc://localhost:<port>} with no TLS and no token: for direct (proxy-less) connections. */
  String directUrl() {
    return "sc://localhost:" + port;
  }

  Path logFile() {
    return logFile;
  }

  /** The version the server reported in its readiness answer, e.g. {@code 4.0.0}. */
  public String sparkVersion() {
    return sparkVersion;
  }

  public Duration startupTime() {
    return startupTime;
  }

  boolean isAlive() {
    return process.isAlive();
  }

  public String logTail() {
    return tail(logFile, LOG_TAIL_LINES);
  }

  /**
   * How many times, so far, a client resumed an operation's result stream with ReattachExecute. Read from the
   * server's INFO log ("ExecuteGrpcResponseSender: Starting for opId=..., lastConsumedStreamIndex=N"), where a
   * resumed stream is one that starts past index 0. Compare before/after a query to prove it reattached.
   */
  public long reattachCount() {
    try (var lines = Files.lines(logFile)) {
      return lines.filter(line -> REATTACHED_STREAM.matcher(line).find()).count();
    } catch (IOException | UncheckedIOException e) {
      throw new IllegalStateException("Cannot read " + logFile, e);
    }
  }

  /** Lines in the server's log so far: a mark for {@link #awaitLogLine}. */
  long logLineCount() {
    try (var lines = Files.lines(logFile)) {
      return lines.count();
    } catch (IOException | UncheckedIOException e) {
      throw new IllegalStateException("Cannot read " + logFile, e);
    }
  }

  /**
   * Waits until a line after the first {@code afterLines} lines of the server's log matches, e.g. to know that
   * a job's tasks really run ({@code "Executor: Running task"}) before interrupting it.
   */
  void awaitLogLine(Pattern pattern, long afterLines, Duration timeout) throws Exception {
    Await.until(
        "a line matching '" + pattern + "' in " + logFile,
        timeout,
        () -> {
          try (var lines = Files.lines(logFile)) {
            return lines.skip(afterLines).anyMatch(line -> pattern.matcher(line).find());
          }
        },
        () -> "last lines:\n" + logTail());
  }

  private static final Pattern REATTACHED_STREAM =
      Pattern.compile(
          "ExecuteGrpcResponseSender: Starting for opId=.*lastConsumedStreamIndex=[1-9]");

  public void stop() {
    destroyTree(process);
    removeHook(shutdownHook);
  }

  /** SIGKILL, as a crash or the OOM killer would: no shutdown, no goodbye to the clients. */
  void kill() throws InterruptedException {
    process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    removeHook(shutdownHook);
  }

  @Override
  public void close() {
    stop();
  }

  @Override
  public String toString() {
    return "Spark Connect " + sparkVersion + " server on port " + port + " (log " + logFile + ")";
  }

  // --- readiness
  // -------------------------------------------------------------------------------------------

  /**
   * Polls with a real AnalyzePlan(SparkVersion) call: the gRPC port only opens after the SparkContext is up, and
   * an answer proves the whole service stack works, not just that something listens.
   */
  private static String awaitReady(Process process, int port, Path logFile, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    ManagedChannel channel =
        Grpc.newChannelBuilderForAddress("localhost", port, InsecureChannelCredentials.create())
            .build();
    try {
      String lastFailure = "no attempt yet";
      while (System.nanoTime() < deadline) {
        if (!process.isAlive()) {
          throw new IllegalStateException(
              "Spark Connect server exited with code "
                  + process.exitValue()
                  + " before it was ready. Log "
                  + logFile
                  + ", last lines:\n"
                  + tail(logFile, LOG_TAIL_LINES));
        }
        try {
          return askSparkVersion(channel);
        } catch (StatusRuntimeException e) {
          lastFailure = e.getStatus().toString();
        }
        sleep(Duration.ofMillis(500));
      }
      throw new IllegalStateException(
          "Spark Connect server on port "
              + port
              + " not ready after "
              + timeout
              + " (last probe: "
              + lastFailure
              + "). Log "
              + logFile
              + ", last lines:\n"
              + tail(logFile, LOG_TAIL_LINES));
    } finally {
      channel.shutdownNow();
    }
  }

  private static final MethodDescriptor<byte[], byte[]> ANALYZE_PLAN =
      MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName("spark.connect.SparkConnectService/AnalyzePlan")
          .setRequestMarshaller(TestMethods.BYTES)
          .setResponseMarshaller(TestMethods.BYTES)
          .build();

  private static String askSparkVersion(ManagedChannel channel) {
    AnalyzePlanRequest request =
        AnalyzePlanRequest.newBuilder()
            .setSessionId(UUID.randomUUID().toString())
            .setUserContext(UserContext.newBuilder().setUserId("sparkgate-e2e-readiness"))
            .setSparkVersion(AnalyzePlanRequest.SparkVersion.getDefaultInstance())
            .build();
    byte[] answer =
        ClientCalls.blockingUnaryCall(
            channel,
            ANALYZE_PLAN,
            CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
            request.toByteArray());
    try {
      return AnalyzePlanResponse.parseFrom(answer).getSparkVersion().getVersion();
    } catch (IOException e) {
      throw new IllegalStateException(
          "Unparseable AnalyzePlan answer from the Spark Connect server", e);
    }
  }

  // --- helpers
  // ---------------------------------------------------------------------------------------------

  private static String readClasspath(Path classpathFile) {
    try {
      String classpath = Files.readString(classpathFile).trim();
      if (classpath.isEmpty()) {
        throw new IllegalStateException("Empty Spark server classpath file " + classpathFile);
      }
      return classpath;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot read the Spark server classpath file "
              + classpathFile
              + " (written by `mvn -f spark-server/pom.xml dependency:build-classpath`, run in pre-integration-test)",
          e);
    }
  }

  /** Non-blank lines of a jvm.options file, without '#' comment lines. */
  static List<String> jvmOptions(Path file) {
    try {
      List<String> options =
          Files.readAllLines(file).stream()
              .map(String::strip)
              .filter(line -> !line.isEmpty() && !line.startsWith("#"))
              .toList();
      if (options.isEmpty()) {
        throw new IllegalStateException("No JVM options in " + file);
      }
      return options;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot read the Spark server JVM options " + file.toAbsolutePath(), e);
    }
  }

  /** Binding port 0 and releasing it leaves a tiny race, acceptable for a single test server. */
  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Children first (Spark itself spawns none in local mode, but be safe), then the JVM; forcibly after 20 s. */
  private static void destroyTree(Process process) {
    process.descendants().forEach(ProcessHandle::destroy);
    process.destroy();
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  private static void removeHook(Thread hook) {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException alreadyShuttingDown) {
      // The hook is running or about to; nothing to undo.
    }
  }

  private static String tail(Path file, int lines) {
    try {
      List<String> all = Files.readAllLines(file);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException | RuntimeException e) {
      return "<could not read " + file + ": " + e + ">";
    }
  }

  private static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for the Spark Connect server", e);
    }
  }
}
