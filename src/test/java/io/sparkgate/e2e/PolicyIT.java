package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.Sparkgate;
import io.sparkgate.testing.MetricsScrape;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarOutputStream;
import java.util.zip.ZipEntry;
import org.apache.spark.api.java.function.ForeachFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped shared-server policy in front of a real Spark 4.0 server, driven by the real JVM client: code
 * execution and local-file access are refused with an error the user can read (rule name, SQLSTATE 42501),
 * and ordinary work, including a result large enough to need ReattachExecute, passes.
 */
@ExtendWith(SparkServerExtension.class)
class PolicyIT {
  @TempDir static Path dir;
  private static Sparkgate proxy;
  private static SparkSession spark;

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    proxy =
        Sparkgate.start(
            ProxyConfigs.write(
                dir,
                ProxyConfigs.PLAINTEXT_LISTENER,
                ProxyConfigs.backend(server.port()),
                ProxyConfigs.policy("shared-server.yaml"),
                "metrics: {address: 127.0.0.1, port: 0}"));
    spark = SparkClients.connect("sc://127.0.0.1:" + proxy.port());
  }

  @AfterAll
  static void stop() throws Exception {
    ProxyConfigs.closeAll(spark, proxy);
  }

  private static String refused(String rule, Executable action) {
    Exception e = assertThrows(Exception.class, action);
    String shown = e.getMessage();
    System.out.println("client shows (" + e.getClass().getName() + "): " + shown);
    assertTrue(shown != null && shown.contains("[SPARKGATE_POLICY_DENIED]"), shown);
    assertTrue(shown.contains("rule '" + rule + "'"), shown);
    assertTrue(shown.contains("SQLSTATE: 42501"), shown);
    return shown;
  }

  @Test
  void javaLambdaUdfIsRefused() {
    var plusOne = functions.udf((UDF1<Long, Long>) x -> x + 1, DataTypes.LongType);
    String shown =
        refused(
            "no-user-code",
            () -> spark.range(3).select(plusOne.apply(functions.col("id"))).collectAsList());
    assertTrue(shown.contains("built-in functions"), shown);
  }

  @Test
  void foreachIsRefused() {
    refused("no-user-code", () -> spark.range(3).foreach((ForeachFunction<Long>) x -> {}));
  }

  @Test
  void addArtifactIsRefused() throws Exception {
    Path jar = dir.resolve("evil.jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
      out.putNextEntry(new ZipEntry("x.txt"));
      out.write("x".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      out.closeEntry();
    }
    refused("no-artifacts", () -> spark.addArtifact(jar.toString()));
  }

  @Test
  void allowDestLocalConfigIsRefused() {
    refused(
        "config-allowlist",
        () -> spark.conf().set("spark.sql.artifact.copyFromLocalToFs.allowDestLocal", "true"));
  }

  /**
   * What the metrics endpoint shows of a real client's work: its answered ExecutePlan under code OK, and a
   * refusal under the policy rule that made it (the differences between two scrapes: other tests ran first).
   */
  @Test
  void metricsCountAnsweredCallsAndRefusalsByRule() throws Exception {
    Map<String, Double> before = MetricsScrape.get(proxy.metricsPort());
    assertEquals(10, spark.range(10).collectAsList().size());
    refused(
        "no-reflection",
        () -> spark.sql("SELECT reflect('java.lang.Runtime','getRuntime')").collectAsList());
    Map<String, Double> after = MetricsScrape.get(proxy.metricsPort());

    String ok = "sparkgate_calls_total{code=OK,method=ExecutePlan}";
    String denied = "sparkgate_calls_total{code=PERMISSION_DENIED,method=ExecutePlan}";
    String rule = "sparkgate_policy_decisions_total{outcome=deny,pool=default,rule=no-reflection}";
    assertTrue(delta(before, after, ok) >= 1, "the answered query: " + after.get(ok));
    assertEquals(1.0, delta(before, after, denied), "one refused ExecutePlan");
    assertEquals(1.0, delta(before, after, rule), "refused by no-reflection");
    assertTrue(after.get("sparkgate_backend_connections{state=ready}") >= 1);
    assertEquals(
        1.0,
        after.get("sparkgate_backend_profile_known{pool=default}"),
        "the real server told its profile");
  }

  private static double delta(
      Map<String, Double> before, Map<String, Double> after, String series) {
    return after.getOrDefault(series, 0.0) - before.getOrDefault(series, 0.0);
  }

  @Test
  void reflectIsRefused() {
    refused(
        "no-reflection",
        () ->
            spark
                .sql("SELECT reflect('java.lang.System','getProperty','user.home')")
                .collectAsList());
  }

  @Test
  void readingALocalFileIsRefused() {
    refused("paths-allowlist", () -> spark.read().text("/etc/hostname").collectAsList());
  }

  @Test
  void ordinaryWorkPasses() {
    spark.conf().set("spark.sql.shuffle.partitions", "4");
    assertEquals("4", spark.conf().get("spark.sql.shuffle.partitions"));
    List<Row> rows =
        spark
            .sql("SELECT id % 3 AS k, count(*) AS n FROM range(30) GROUP BY k ORDER BY k")
            .collectAsList();
    assertEquals(3, rows.size());
    Dataset<Row> left =
        spark
            .range(100)
            .filter(functions.col("id").gt(49))
            .withColumn("k", functions.col("id").mod(5));
    Dataset<Row> counts = left.groupBy("k").count();
    assertEquals(5, counts.join(left, "k").select("k").distinct().count());
    StructType schema =
        new StructType().add("name", DataTypes.StringType).add("n", DataTypes.IntegerType);
    Dataset<Row> people =
        spark.createDataFrame(
            List.of(RowFactory.create("a", 1), RowFactory.create("b", 2)), schema);
    people.createOrReplaceTempView("people");
    assertEquals(3L, spark.sql("SELECT sum(n) FROM people").collectAsList().get(0).getLong(0));
    assertEquals(schema.fieldNames().length, spark.table("people").schema().fields().length);
    spark.table("people").explain();
  }

  @Test
  void aRefusalLeavesTheSessionUsable() {
    refused(
        "no-reflection",
        () -> spark.sql("SELECT java_method('java.lang.System','getenv')").collectAsList());
    assertEquals(10L, spark.range(10).count());
  }

  @Test
  void largeResultPasses(SparkConnectServerProcess server) throws Exception {
    long reattachesBefore = server.reattachCount();
    long rows = 2_000_000L;
    assertEquals(
        rows, SparkClients.countRows(spark.range(rows).selectExpr("id", "repeat('x', 16) AS pad")));
    assertTrue(
        server.reattachCount() > reattachesBefore, "the result should have needed ReattachExecute");
  }
}
