package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.Sparkgate;
import io.sparkgate.TestProxies;
import io.sparkgate.forward.CallHook;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionView;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.jar.JarOutputStream;
import java.util.zip.ZipEntry;
import org.apache.spark.api.java.function.ForeachFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The inspector on requests captured from the real 4.0 JVM client (not hand-built look-alikes): a proxy without
 * a policy records every request message as sent, and each is inspected the way the policy stage does.
 */
@ExtendWith(SparkServerExtension.class)
class CapturedRequestsIT {
  private record Captured(String method, byte[] bytes) {}

  private static final List<Captured> captured = Collections.synchronizedList(new ArrayList<>());
  private static final Inspector inspector = new Inspector();
  private static Sparkgate proxy;
  private static SparkSession spark;
  private static Path dir;

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    dir = ProxyConfigs.freshDir("captured");

    CallHook.Factory recorder =
        (method, headers, transport) ->
            new CallHook() {
              @Override
              public byte[] onRequest(byte[] message) {
                captured.add(new Captured(method.getBareMethodName(), message));
                return message;
              }
            };
    proxy =
        TestProxies.start(
            ProxyConfigs.write(
                dir, ProxyConfigs.PLAINTEXT_LISTENER, ProxyConfigs.backend(server.port())),
            recorder);
    spark = SparkClients.connect("sc://127.0.0.1:" + proxy.port());
  }

  @AfterAll
  static void stop() throws Exception {
    ProxyConfigs.closeAll(spark, proxy);
  }

  @BeforeEach
  void clear() {
    captured.clear();
  }

  /** Every fact of the requests captured since the test began. */
  private static List<Fact> facts() {
    List<Fact> out = new ArrayList<>();
    List<Captured> copy;
    synchronized (captured) {
      copy = new ArrayList<>(captured);
    }
    var tracker = inspector.newArtifactTracker();
    for (Captured c : copy) {
      Facts f =
          "AddArtifacts".equals(c.method())
              ? inspector.inspect(c.method(), c.bytes(), SessionView.DEFAULT, tracker)
              : inspector.inspect(c.method(), c.bytes(), SessionView.DEFAULT);
      out.addAll(f.all());
    }
    out.addAll(inspector.finishArtifacts(tracker).all());
    return out;
  }

  private static void assertFact(Fact.Kind kind, Predicate<Fact> p, String what) {
    List<Fact> all = facts();
    assertTrue(
        all.stream().anyMatch(f -> f.kind() == kind && p.test(f)), what + " not found in " + all);
  }

  private static void quietly(Runnable r) {
    try {
      r.run();
    } catch (Exception expectedOrNot) {
      // only the request matters here (the server cannot run a test class's lambda: it is not on
      // its classpath)
    }
  }

  @Test
  void javaLambdaUdf_isScalaUdfUserCode() {
    var plusOne = functions.udf((UDF1<Long, Long>) x -> x + 1, DataTypes.LongType);
    quietly(() -> spark.range(3).select(plusOne.apply(functions.col("id"))).collectAsList());
    assertFact(Fact.Kind.USER_CODE, f -> f.subkind().equals("scala_udf"), "scala_udf");
  }

  @Test
  void foreach_isUserCode() {
    quietly(() -> spark.range(3).foreach((ForeachFunction<Long>) x -> {}));
    assertFact(
        Fact.Kind.USER_CODE,
        f -> f.subkind().equals("map_partitions"),
        "foreach as map_partitions");
  }

  @Test
  void addArtifact_nameSizeAndChecksum() throws Exception {
    Path jar = dir.resolve("captured.jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
      out.putNextEntry(new ZipEntry("x.txt"));
      out.write(new byte[4096]);
      out.closeEntry();
    }
    quietly(() -> spark.addArtifact(jar.toString()));
    assertFact(
        Fact.Kind.ARTIFACT,
        f ->
            "jars/captured.jar".equals(f.get("name"))
                && "jars/".equals(f.get("prefix"))
                && Long.parseLong(f.get("size")) > 0
                && "true".equals(f.get("crc_ok"))
                && f.get("sha256").length() == 64,
        "jars/captured.jar with size, checked CRC and SHA-256");
  }

  @Test
  void confSet_isConfigSet() {
    spark.conf().set("spark.sql.shuffle.partitions", "7");
    assertFact(
        Fact.Kind.CONFIG_SET,
        f -> "spark.sql.shuffle.partitions".equals(f.get("key")) && "7".equals(f.get("value")),
        "CONFIG_SET spark.sql.shuffle.partitions=7");
  }

  @Test
  void createDataFrame_sqlWithParameters_selectExpr() {
    StructType schema =
        new StructType().add("city", DataTypes.StringType).add("n", DataTypes.IntegerType);
    spark
        .createDataFrame(List.of(RowFactory.create("sf", 1), RowFactory.create("la", 2)), schema)
        .createOrReplaceTempView("captured_cities");
    List<Row> rows =
        spark
            .sql(
                "SELECT city FROM captured_cities WHERE n > :min", Map.<String, Object>of("min", 1))
            .selectExpr("upper(city) AS c")
            .collectAsList();
    assertTrue(rows.size() <= 1);
    assertFact(
        Fact.Kind.TABLE_READ,
        f -> "captured_cities".equals(f.get("name")),
        "read of captured_cities");
    assertFact(
        Fact.Kind.SQL,
        f -> String.valueOf(f.get("sql")).contains(":min"),
        "the SQL with its parameter marker");
    assertFact(
        Fact.Kind.FUNCTION_CALL, f -> "upper".equals(f.get("name")), "upper() from selectExpr");
    assertFact(
        Fact.Kind.CATALOG_OP,
        f -> f.subkind().contains("view") || "captured_cities".equals(f.get("name")),
        "the temp view created from the local relation");
  }
}
