package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sparkgate.Sparkgate;
import io.sparkgate.config.ListenConfig;
import io.sparkgate.config.TlsConfig;
import io.sparkgate.testing.TestConfigs;
import io.sparkgate.tls.DevCertificates;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.spark.SparkThrowable;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The real Spark 4.0 JVM client through Sparkgate, over TLS with a private CA, against the shared real Spark
 * Connect server (which ends every response stream after 1 s or 1 MiB, so big results need ReattachExecute).
 * Large results are compared row by row with the same query sent straight to the server.
 */
@ExtendWith(SparkServerExtension.class)
@Timeout(
    value = 5,
    unit = TimeUnit.MINUTES) // a hung stream fails the test instead of the whole build
class ProxyIT {

  private static final Path WORK_DIR = Path.of("target", "e2e");

  private static Sparkgate proxy;
  private static String proxyUrl;

  /** Through the proxy, over TLS. */
  private static SparkSession spark;

  /** Straight to the server, plaintext: the reference answers. */
  private static SparkSession direct;

  @BeforeAll
  static void startProxy(SparkConnectServerProcess server) throws Exception {
    Path dir = Files.createTempDirectory(Files.createDirectories(WORK_DIR), "proxy-it-");
    DevCertificates.Generated certs =
        DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    // The client trusts exactly our private CA: nothing from the JDK's default cacerts.
    ClientTrust.useTrustStore(
        ClientTrust.writeTrustStore(dir.resolve("client-trust.p12"), readCert(certs.caCert())));

    ListenConfig listen =
        TestConfigs.listen(
            false, ListenConfig.DEFAULT_MAX_INBOUND_MESSAGE_BYTES, Duration.ofSeconds(10));
    TlsConfig tls =
        new TlsConfig(
            certs.serverCert(), certs.serverKey(), Optional.empty(), Duration.ofMinutes(1));
    proxy =
        Sparkgate.start(TestConfigs.proxy(listen, Optional.of(tls), "localhost", server.port()));
    proxyUrl = "sc://localhost:" + proxy.port() + "/;use_ssl=true";

    spark = SparkClients.connect(proxyUrl);
    direct = SparkClients.connect(server.directUrl());
  }

  @AfterAll
  static void stopProxy() throws Exception {
    try {
      if (spark != null) {
        spark.close(); // ReleaseSession through the proxy
      }
      if (direct != null) {
        direct.close();
      }
    } finally {
      if (proxy != null) {
        proxy.close();
      }
    }
  }

  // --- the basics
  // --------------------------------------------------------------------------------------------

  @Test
  void reportsTheServersVersion() {
    assertEquals("4.0.0", spark.version());
  }

  @Test
  void countsARange() {
    assertEquals(1_000_000L, spark.range(1_000_000).count());
  }

  @Test
  void runsSql() {
    List<Row> rows =
        spark
            .sql(
                "SELECT id % 3 AS k, count(*) AS n, sum(id) AS s FROM range(300) GROUP BY k ORDER BY k")
            .collectAsList();
    assertEquals(3, rows.size());
    for (int k = 0; k < 3; k++) {
      assertEquals(k, rows.get(k).getLong(0));
      assertEquals(100L, rows.get(k).getLong(1));
      assertEquals(14850L + 100L * k, rows.get(k).getLong(2)); // sum of 3i + k for i in [0, 100)
    }
  }

  @Test
  void createsADataFrameFromClientRows() {
    StructType schema =
        new StructType().add("name", DataTypes.StringType).add("age", DataTypes.IntegerType);
    List<Row> people =
        List.of(
            RowFactory.create("Ada", 36),
            RowFactory.create("Grace", 45),
            RowFactory.create("Linus", 21),
            RowFactory.create("Zoë ✓", 30)); // non-ASCII survives the trip
    Dataset<Row> df = spark.createDataFrame(people, schema);
    // Evaluated on the server: the local relation went up as Arrow and came back filtered and
    // sorted.
    List<Row> older = df.filter("age >= 30").orderBy("name").collectAsList();
    assertEquals(
        List.of(
            RowFactory.create("Ada", 36),
            RowFactory.create("Grace", 45),
            RowFactory.create("Zoë ✓", 30)),
        older);
    assertEquals(132L, df.selectExpr("sum(age)").first().getLong(0));
  }

  // --- big results and reattach
  // ------------------------------------------------------------------------------

  /**
   * 3,000,000 rows read with toLocalIterator through the proxy and, at the same time, straight from the server:
   * every row must be equal, in the same order (a range is produced in partition order, deterministically).
   * The columns mix longs, a pseudo-random long, a double and a per-row string, so a dropped, duplicated or
   * reordered Arrow batch anywhere in the stream (including across reattaches) would show.
   */
  @Test
  void threeMillionRowsThroughTheProxyEqualTheDirectResult(SparkConnectServerProcess server)
      throws Exception {
    long rows = 3_000_000L;
    String[] columns = {"id", "xxhash64(id) AS h", "id / 7.0D AS d", "concat('r', id) AS s"};
    long reattachesBefore = server.reattachCount();
    long compared =
        compareRowByRow(
            spark.range(rows).selectExpr(columns), direct.range(rows).selectExpr(columns));
    assertEquals(rows, compared);
    long reattaches = server.reattachCount() - reattachesBefore;
    assertTrue(reattaches > 0, "a result this size must have needed ReattachExecute");
    System.out.println(
        "ProxyIT: "
            + rows
            + " rows equal through the proxy and direct; "
            + reattaches
            + " reattaches (both clients)");
  }

  /**
   * A long result of wide rows (about 200 MB of strings) arrives complete and identical through the proxy while
   * the server cuts the response stream every second or MiB: the reattach count in the server's log must rise
   * (ReattachExecute really went through the proxy), and the client must still see every row exactly once.
   * 16 partitions keep each task result small: with 2 big partitions the 2 GB test server evicts task results
   * from its block manager (TaskResultLost), a server limit that has nothing to do with the proxy.
   */
  @Test
  void longResultSurvivesManyReattachesThroughTheProxy(SparkConnectServerProcess server)
      throws Exception {
    long rows = 2_000_000L;
    String[] columns = {"id", "concat(sha2(cast(id AS STRING), 256), '/', id) AS wide"};
    long reattachesBefore = server.reattachCount();
    // Through the proxy alone first, counting the reattaches it needed.
    long checksum = 0;
    long count = 0;
    Iterator<Row> it = spark.range(0, rows, 1, 16).selectExpr(columns).toLocalIterator();
    try {
      while (it.hasNext()) {
        Row row = it.next();
        assertEquals(count, row.getLong(0), "rows out of order or missing");
        checksum = checksum * 31 + row.getString(1).hashCode();
        count++;
      }
    } finally {
      ((AutoCloseable) it).close();
    }
    long reattaches = server.reattachCount() - reattachesBefore;
    assertEquals(rows, count);
    assertTrue(
        reattaches >= 3,
        "expected several ReattachExecute calls through the proxy, saw " + reattaches);

    // The same query straight to the server gives the same rows in the same order.
    long directChecksum = 0;
    Iterator<Row> reference = direct.range(0, rows, 1, 16).selectExpr(columns).toLocalIterator();
    try {
      while (reference.hasNext()) {
        directChecksum = directChecksum * 31 + reference.next().getString(1).hashCode();
      }
    } finally {
      ((AutoCloseable) reference).close();
    }
    assertEquals(
        directChecksum, checksum, "wide strings differ between the proxy and the direct result");
    System.out.println(
        "ProxyIT: " + rows + " wide rows through the proxy with " + reattaches + " reattaches");
  }

  // --- interrupts and errors
  // ---------------------------------------------------------------------------------

  /**
   * interruptTag through the proxy: one thread runs an effectively endless job under a tag, another interrupts
   * the tag; the Interrupt RPC reaches the server, which cancels the job, and the waiting client gets
   * OPERATION_CANCELED (sent by the server on the ExecutePlan stream, through the proxy).
   *
   * <p>The interrupt is sent only once the job's tasks run. Interrupting an operation while the server is still
   * planning it is racy in Spark 4.0 itself: the client gets OPERATION_CANCELED, but adaptive execution may submit
   * the job's shuffle stage right after the cancellation, and that orphaned job then runs forever on both cores.
   */
  @Test
  void interruptTagCancelsALongJob(SparkConnectServerProcess server) throws Exception {
    String tag = "sparkgate-it-" + UUID.randomUUID();
    long logMark = server.logLineCount();
    CompletableFuture<Object> job =
        CompletableFuture.supplyAsync(
            () -> {
              spark.addTag(tag);
              try {
                // About 4.6e18 rows: never finishes on its own. max, not sum: a sum of hashes
                // overflows within a second and fails with ARITHMETIC_OVERFLOW (ANSI mode).
                return spark.range(0, Long.MAX_VALUE / 2).selectExpr("max(xxhash64(id))").first();
              } finally {
                spark.removeTag(tag); // tags are per thread
              }
            });
    try {
      server.awaitLogLine(RUNNING_TASK, logMark, Duration.ofSeconds(60));
      assertFalse(job.isDone(), "the job ended before it was interrupted: " + describe(job));
      // The ids of the operations the server interrupted.
      List<String> interrupted =
          scala.jdk.javaapi.CollectionConverters.asJava(spark.interruptTag(tag));
      assertEquals(
          1, interrupted.size(), "interruptTag should find exactly our operation: " + interrupted);

      ExecutionException failure =
          assertThrows(ExecutionException.class, () -> job.get(60, TimeUnit.SECONDS));
      Throwable cause = failure.getCause();
      String text = String.valueOf(cause);
      System.out.println("ProxyIT: interrupted job failed with " + text);
      assertTrue(text.contains("OPERATION_CANCELED"), "expected OPERATION_CANCELED, got " + text);
      if (cause instanceof SparkThrowable st) {
        assertEquals("OPERATION_CANCELED", st.getCondition());
      }
    } finally {
      spark.interruptTag(tag); // never leave an endless job on the shared server
      job.cancel(true);
    }
    // The job's tasks are gone (else this would wait for free cores forever), and the session
    // carries on.
    assertEquals(
        10L, assertTimeoutPreemptively(Duration.ofSeconds(60), () -> spark.range(10).count()));
  }

  private static final Pattern RUNNING_TASK = Pattern.compile("Executor: Running task ");

  /**
   * Spark's rich errors pass through untouched: the error class and SQLSTATE come from the ErrorInfo in
   * grpc-status-details-bin, and message parameters and the SQL query context from FetchErrorDetails.
   */
  @Test
  void analysisErrorsKeepTheirErrorClassAndSqlState() {
    Exception e =
        assertThrows(
            Exception.class,
            () -> spark.sql("SELECT * FROM sparkgate_no_such_table").collectAsList());
    System.out.println(
        "ProxyIT: missing table -> " + e.getClass().getName() + ": " + e.getMessage());
    assertTrue(e instanceof SparkThrowable, "not a SparkThrowable: " + e);
    SparkThrowable st = (SparkThrowable) e;
    assertEquals("TABLE_OR_VIEW_NOT_FOUND", st.getCondition());
    assertEquals("42P01", st.getSqlState());
    assertTrue(
        st.getMessageParameters()
            .getOrDefault("relationName", "")
            .contains("sparkgate_no_such_table"),
        "message parameters: " + st.getMessageParameters());
    assertTrue(e.getMessage().contains("TABLE_OR_VIEW_NOT_FOUND"), e.getMessage());
    assertTrue(
        st.getQueryContext().length > 0
            && Objects.equals(st.getQueryContext()[0].fragment(), "sparkgate_no_such_table"),
        "the SQL query context (from FetchErrorDetails) should point at the table name");
  }

  // --- bad clients
  // -------------------------------------------------------------------------------------------

  /** A plaintext client on the TLS port fails at once (no endless retries), and the proxy keeps serving. */
  @Test
  void plaintextClientOnTheTlsPortFailsFastAndTheProxyKeepsServing() {
    String plaintextUrl = "sc://localhost:" + proxy.port();
    Throwable refused =
        assertTimeoutPreemptively(
            Duration.ofSeconds(30),
            () -> {
              SparkSession wrong = SparkClients.connectFailFast(plaintextUrl);
              try {
                // RetriesExceeded (a Throwable, not an Exception) wrapping the UNAVAILABLE status
                // as suppressed.
                return assertThrows(Throwable.class, wrong::version);
              } finally {
                try {
                  wrong.close();
                } catch (Throwable ignored) {
                  // ReleaseSession over the same broken connection fails too
                }
              }
            });
    assertNotNull(refused);
    System.out.println(
        "ProxyIT: plaintext client on the TLS port -> "
            + refused
            + (refused.getSuppressed().length > 0
                ? " (suppressed: " + refused.getSuppressed()[0] + ")"
                : "")
            + (refused.getCause() != null ? " (cause: " + refused.getCause() + ")" : ""));
    assertEquals("4.0.0", spark.version());
    assertEquals(100L, spark.range(100).count());
  }

  // --- helpers
  // -----------------------------------------------------------------------------------------------

  /**
   * Reads both results with toLocalIterator in lockstep and asserts every row equal; returns the row count.
   * Both iterators are closed (an open one leaks its last Arrow batch and makes session.close() fail).
   */
  private static long compareRowByRow(Dataset<Row> viaProxy, Dataset<Row> reference)
      throws Exception {
    Iterator<Row> a = viaProxy.toLocalIterator();
    try {
      Iterator<Row> b = reference.toLocalIterator();
      try {
        long n = 0;
        while (a.hasNext()) {
          assertTrue(
              b.hasNext(), "the proxy returned more rows than the server: at least " + (n + 1));
          Row ra = a.next();
          Row rb = b.next();
          if (!ra.equals(rb)) {
            fail("row " + n + " differs: proxy " + ra + " vs direct " + rb);
          }
          n++;
        }
        assertFalse(b.hasNext(), "the proxy returned fewer rows than the server: " + n);
        return n;
      } finally {
        ((AutoCloseable) b).close();
      }
    } finally {
      ((AutoCloseable) a).close();
    }
  }

  private static X509Certificate readCert(Path pem) throws Exception {
    try (InputStream in = Files.newInputStream(pem)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  private static String describe(CompletableFuture<?> job) {
    try {
      return String.valueOf(job.getNow(null));
    } catch (Exception e) {
      return String.valueOf(e.getCause());
    }
  }
}
