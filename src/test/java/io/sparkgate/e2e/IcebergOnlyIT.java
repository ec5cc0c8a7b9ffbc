package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgate.Sparkgate;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * On an Iceberg-only server (the shared 4.0 server loads Iceberg's extension but not Hudi's) the
 * mixed-lakehouse time-travel rule is inactive: Iceberg SQL time travel, in all four syntaxes, passes through
 * Sparkgate running the shipped policies/mixed-lakehouse.yaml and returns the older snapshot's rows.
 */
@ExtendWith(SparkServerExtension.class)
class IcebergOnlyIT {
  private static final String TABLE =
      "iceberg.it.trips_" + UUID.randomUUID().toString().substring(0, 8);

  private static Sparkgate proxy;
  private static SparkSession spark;

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    Path dir = ProxyConfigs.freshDir("iceberg-only");
    proxy =
        Sparkgate.start(
            ProxyConfigs.write(
                dir,
                ProxyConfigs.PLAINTEXT_LISTENER,
                ProxyConfigs.backend(server.port()),
                ProxyConfigs.policy("mixed-lakehouse.yaml")));
    spark = SparkClients.connect("sc://127.0.0.1:" + proxy.port());
  }

  @AfterAll
  static void stop() throws Exception {
    ProxyConfigs.closeAll(spark, proxy);
  }

  @Test
  void icebergSqlTimeTravel_allFourSyntaxes_passAndReadTheOlderSnapshot() {
    spark.sql("CREATE NAMESPACE IF NOT EXISTS iceberg.it");
    spark.sql("CREATE TABLE " + TABLE + " (id BIGINT, city STRING) USING iceberg");
    spark.sql("INSERT INTO " + TABLE + " VALUES (1, 'sf'), (2, 'nyc')");
    List<Row> first =
        spark
            .sql(
                "SELECT snapshot_id, CAST(committed_at AS STRING) FROM "
                    + TABLE
                    + ".snapshots ORDER BY committed_at")
            .collectAsList();
    long snapshot = first.get(0).getLong(0);
    String committed = first.get(0).getString(1);
    spark.sql("INSERT INTO " + TABLE + " VALUES (3, 'la')");
    assertEquals(3L, spark.sql("SELECT count(*) FROM " + TABLE).first().getLong(0));

    for (String clause :
        List.of(
            "VERSION AS OF " + snapshot,
            "FOR SYSTEM_VERSION AS OF " + snapshot,
            "TIMESTAMP AS OF '" + committed + "'",
            "FOR SYSTEM_TIME AS OF '" + committed + "'")) {
      long rows = spark.sql("SELECT count(*) FROM " + TABLE + " " + clause).first().getLong(0);
      assertEquals(2L, rows, clause);
    }
  }
}
