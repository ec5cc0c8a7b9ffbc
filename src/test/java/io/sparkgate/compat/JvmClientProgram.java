package io.sparkgate.compat;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.connect.client.RetryPolicy;
import org.apache.spark.sql.connect.client.SparkConnectClient;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.concurrent.duration.FiniteDuration;

/**
 * The compatibility suite's client program for the real Spark Connect JVM client. Compiled against the 4.0
 * client's API (the test classpath) and run by {@link JvmClient} in a child JVM holding only one client
 * version's jars (4.0, 4.1, 4.2) and this class: it touches nothing of the test harness.
 *
 * <p>Reads the {@code sc://} URL from the environment variable {@value #URL_VARIABLE} (never the command line,
 * where the token would show in process listings), the scenario ids from its arguments, and prints one {@link
 * Outcome} JSON line per scenario on standard output. Trust in the proxy's private CA comes from {@code
 * -Djavax.net.ssl.trustStore}, as a user would pass it.
 *
 * <p>Python-only scenarios map to the JVM's own user code where it has one (a Java UDF for {@code python_udf},
 * {@code mapPartitions} for {@code map_in_pandas}, a Java {@code foreachBatch}); the rest are {@code
 * unsupported}.
 */
public final class JvmClientProgram {

  static final String URL_VARIABLE = "SPARKGATE_COMPAT_URL";

  /**
   * First argument of the retry mode: {@code retry ACTION [MAX_RETRIES INITIAL_BACKOFF_MS MULTIPLIER]} runs one
   * action ({@code range} or {@code reflect}) and prints {@code {"retry": ACTION, "outcome": "ok|error",
   * "millis": ..., "error": CLASS, "detail": MESSAGE}}, timing the action alone (RetryContractIT).
   */
  static final String RETRY = "retry";

  private static final int LARGE_ROWS = 12_000;
  private static final int INTERRUPT_TASKS = 400;

  private final SparkSession spark;
  private final Path scratch;

  private JvmClientProgram(SparkSession spark, Path scratch) {
    this.spark = spark;
    this.scratch = scratch;
  }

  public static void main(String[] args) throws Exception {
    String url = System.getenv(URL_VARIABLE);
    if (url == null || url.isEmpty()) {
      System.err.println("set " + URL_VARIABLE + " to the sc:// URL");
      System.exit(2);
    }
    if (args.length > 0 && args[0].equals(RETRY)) {
      retry(url, args);
      return;
    }
    Path scratch = Files.createTempDirectory("sparkgate-compat-jvm-");
    int status = 0;
    try (SparkSession spark = SparkSession.builder().remote(url).create()) {
      JvmClientProgram program = new JvmClientProgram(spark, scratch);
      for (String id : args) {
        print(id, program.run(id));
      }
    } catch (RuntimeException | Error e) {
      // A session that cannot even be created: every remaining scenario is lost; the harness
      // reports them.
      System.err.println("session failed: " + e);
      status = 1;
    }
    System.out.flush();
    // The client's gRPC and Arrow threads are not all daemons; do not wait for them.
    System.exit(status);
  }

  /**
   * The retry mode: one action with the client's default retry policy, or with one a user builds (the {@code
   * sc://} URL has no retry settings: {@code SparkConnectClient.builder().retryPolicy(...)} is the way). The
   * session is not closed afterwards, so no ReleaseSession follows the measured calls.
   */
  private static void retry(String url, String[] args) throws Exception {
    SparkConnectClient.Builder builder = SparkConnectClient.builder().connectionString(url);
    if (args.length == 5) {
      builder.retryPolicy(
          retryPolicy(
              Integer.parseInt(args[2]), Long.parseLong(args[3]), Double.parseDouble(args[4])));
    }
    org.apache.spark.sql.connect.SparkSession spark =
        org.apache.spark.sql.connect.SparkSession.builder().client(builder.build()).create();
    String action = args[1];
    long started = System.nanoTime();
    String outcome;
    String error = "";
    String detail;
    try {
      detail =
          action.equals("reflect")
              ? spark
                  .sql("SELECT reflect('java.lang.System', 'getProperty', 'user.home')")
                  .collectAsList()
                  .toString()
              : spark.range(3).collectAsList().toString();
      outcome = "ok";
    } catch (Throwable e) {
      // Scala throws checked exceptions too (AnalysisException, SparkException), and the client
      // gives up
      // on retries with RetriesExceeded, a Throwable without a message whose attempts are
      // suppressed.
      outcome = "error";
      error = e.getClass().getName();
      detail = String.valueOf(e.getMessage());
      Throwable[] suppressed = e.getSuppressed();
      if (e.getMessage() == null && suppressed.length > 0) {
        detail = suppressed.length + " suppressed, the last: " + suppressed[suppressed.length - 1];
      }
    }
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    System.out.println(
        "{\"retry\": "
            + json(action)
            + ", \"outcome\": "
            + json(outcome)
            + ", \"millis\": "
            + millis
            + ", \"error\": "
            + json(error)
            + ", \"detail\": "
            + json(detail)
            + "}");
    System.out.flush();
    System.exit(0);
  }

  /**
   * The default policy with the retry count and backoff replaced, no jitter. Through {@code copy} by
   * reflection: the case class gained two parameters in 4.1 (the server's retry delay), so a call compiled
   * against 4.0 would not link on 4.1 and later; the parameters past the sixth keep their defaults.
   */
  static RetryPolicy retryPolicy(int maxRetries, long initialBackoffMillis, double multiplier)
      throws ReflectiveOperationException {
    RetryPolicy base = RetryPolicy.defaultPolicy();
    Method copy =
        Arrays.stream(RetryPolicy.class.getMethods())
            .filter(m -> m.getName().equals("copy"))
            .findFirst()
            .orElseThrow(() -> new NoSuchMethodException("RetryPolicy.copy"));
    Object[] values = new Object[copy.getParameterCount()];
    for (int i = 0; i < values.length; i++) {
      values[i] = RetryPolicy.class.getMethod("copy$default$" + (i + 1)).invoke(base);
    }
    values[0] = Option.apply(maxRetries);
    values[1] = FiniteDuration.apply(initialBackoffMillis, TimeUnit.MILLISECONDS);
    values[3] = multiplier;
    values[4] = FiniteDuration.apply(0, TimeUnit.MILLISECONDS); // jitter
    return (RetryPolicy) copy.invoke(base, values);
  }

  private String[] run(String id) {
    try {
      switch (id) {
        case "version":
          String version = spark.version();
          return version.matches("\\d+\\.\\d+\\.\\d+.*")
              ? pass("server " + version)
              : fail("version " + version);
        case "range":
          long count = spark.range(10).count();
          return count == 10 ? pass("range(10).count() = 10") : fail("count " + count);
        case "sql":
          List<Row> rows = spark.sql("SELECT 1 + 1 AS two").collectAsList();
          return rows.size() == 1 && rows.get(0).getInt(0) == 2
              ? pass("SELECT 1 + 1 = 2")
              : fail("rows " + rows);
        case "create_dataframe":
          return createDataFrame();
        case "large_result":
          return largeResult();
        case "interrupt":
          return interrupt();
        case "rich_error":
          return richError();
        case "python_udf":
          return refusal(this::javaUdf);
        case "map_in_pandas":
          return refusal(
              () ->
                  spark
                      .range(3)
                      .mapPartitions((MapPartitionsFunction<Long, Long>) it -> it, Encoders.LONG())
                      .collectAsList()
                      .toString());
        case "foreach_batch":
          return refusal(this::foreachBatch);
        case "add_artifact":
          return refusal(this::addArtifact);
        case "reflect":
          return refusal(
              () ->
                  spark
                      .sql("SELECT reflect('java.lang.System', 'getProperty', 'user.home')")
                      .collectAsList()
                      .toString());
        case "local_file_read":
          return refusal(this::localFileRead);
        case "conf_set":
          return refusal(
              () -> {
                spark.conf().set("spark.sql.artifact.copyFromLocalToFs.allowDestLocal", "true");
                return "set";
              });
        case "pandas_udf":
        case "udtf":
        case "python_data_source":
          return new String[] {"unsupported", "the JVM client has no " + id.replace('_', ' ')};
        default:
          return new String[] {"unsupported", "unknown scenario " + id};
      }
    } catch (RuntimeException | Error e) {
      return fail(e.getClass().getName() + ": " + e.getMessage());
    } catch (Exception e) {
      return fail(e.getClass().getName() + ": " + e.getMessage());
    }
  }

  private String[] createDataFrame() {
    StructType schema =
        new StructType().add("id", DataTypes.IntegerType).add("name", DataTypes.StringType);
    List<Row> rows =
        List.of(RowFactory.create(1, "a"), RowFactory.create(2, "b"), RowFactory.create(3, "c"));
    List<Row> back = spark.createDataFrame(rows, schema).orderBy("id").collectAsList();
    return back.size() == 3 && "c".equals(back.get(2).getString(1))
        ? pass("3 local rows round-tripped")
        : fail("rows " + back);
  }

  /** About 2.5 MB in one result: the server's 1 MiB stream limit makes the client reattach to read it all. */
  private String[] largeResult() {
    List<Row> rows =
        spark.range(0, LARGE_ROWS).selectExpr("id", "repeat('x', 200) AS pad").collectAsList();
    long last = rows.isEmpty() ? -1 : rows.get(rows.size() - 1).getLong(0);
    return rows.size() == LARGE_ROWS && last == LARGE_ROWS - 1
        ? pass(LARGE_ROWS + " rows of 200 bytes")
        : fail(rows.size() + " rows, last id " + last);
  }

  /**
   * A query of many short tasks (some seconds of work, no shuffle), interrupted once the server reports it
   * running. Short tasks because cancelling stops a job between tasks, never inside a running one; bounded
   * because an interrupt that lands before Spark submits the job cancels the operation but not the job, which
   * then runs to its end while the next scenarios wait for the cores.
   */
  private String[] interrupt() throws Exception {
    ExecutorService executor =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "compat-long-query");
              t.setDaemon(true);
              return t;
            });
    try {
      Future<List<Long>> query =
          executor.submit(
              () ->
                  spark
                      .range(0, 1L << 33, 1, INTERRUPT_TASKS)
                      .filter("hash(id, 7) = 0")
                      .collectAsList());
      // Give it time to reach its job: an interrupt while it is still being planned cancels the
      // operation but not a job Spark submits after that.
      Thread.sleep(1_500);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      boolean interrupted = false;
      while (!interrupted && !query.isDone() && System.nanoTime() < deadline) {
        interrupted = !spark.interruptAll().isEmpty();
        if (!interrupted) {
          Thread.sleep(300);
        }
      }
      if (!interrupted) {
        return fail(query.isDone() ? "the query ended by itself" : "nothing to interrupt in 60 s");
      }
      try {
        query.get(60, TimeUnit.SECONDS);
        return fail("the interrupted query returned a result");
      } catch (ExecutionException e) {
        return pass("interrupted: " + firstLine(e.getCause().getMessage()));
      } catch (TimeoutException e) {
        return fail("the interrupted query was still running 60 s later");
      }
    } finally {
      executor.shutdownNow();
    }
  }

  private String[] richError() {
    spark.conf().set("spark.sql.ansi.enabled", "true");
    try {
      spark.sql("SELECT 1 / 0").collectAsList();
      return fail("1 / 0 under ANSI mode returned a result");
    } catch (RuntimeException e) {
      String shown = String.valueOf(e.getMessage());
      return shown.contains("DIVIDE_BY_ZERO") && shown.contains("22012")
          ? pass(firstLine(shown))
          : fail(e.getClass().getName() + ": " + shown);
    }
  }

  private String javaUdf() {
    UserDefinedFunction plusOne = functions.udf((UDF1<Long, Long>) x -> x + 1, DataTypes.LongType);
    return spark.range(3).select(plusOne.apply(functions.col("id"))).collectAsList().toString();
  }

  private String foreachBatch() throws Exception {
    StreamingQuery query =
        spark
            .readStream()
            .format("rate")
            .load()
            .writeStream()
            .foreachBatch((VoidFunction2<Dataset<Row>, Long>) (batch, batchId) -> {})
            .start();
    query.stop();
    return "a foreachBatch stream started (" + query.id() + ")";
  }

  private String addArtifact() throws IOException {
    Path jar = scratch.resolve("compat-artifact.jar");
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().putValue("Manifest-Version", "1.0");
    try (OutputStream out = Files.newOutputStream(jar);
        JarOutputStream unused = new JarOutputStream(out, manifest)) {
      // An empty jar is enough: the upload itself is what must be refused.
    }
    spark.addArtifact(jar.toString());
    return "uploaded " + jar.getFileName();
  }

  private String localFileRead() throws IOException {
    Path file = Files.writeString(scratch.resolve("local.txt"), "a line\n");
    return spark.read().text(file.toAbsolutePath().toString()).collectAsList().toString();
  }

  private interface Action {
    String call() throws Exception;
  }

  /** {@code refused} with exactly what the client shows ({@code getMessage}), or {@code ran}. */
  private static String[] refusal(Action action) {
    try {
      return new String[] {"ran", action.call()};
    } catch (Exception e) {
      return new String[] {"refused", String.valueOf(e.getMessage())};
    }
  }

  private static String[] pass(String detail) {
    return new String[] {"pass", detail};
  }

  private static String[] fail(String detail) {
    return new String[] {"fail", detail};
  }

  private static String firstLine(String text) {
    String s = String.valueOf(text);
    int newline = s.indexOf('\n');
    return newline < 0 ? s : s.substring(0, newline);
  }

  private static void print(String id, String[] outcome) {
    String line =
        "{\"scenario\": "
            + json(id)
            + ", \"outcome\": "
            + json(outcome[0])
            + ", \"detail\": "
            + json(outcome[1])
            + "}";
    System.out.println(line);
    System.out.flush();
  }

  /** A JSON string literal; the child JVM has no JSON library of its own to lean on. */
  static String json(String s) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : String.valueOf(s).toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }
}
