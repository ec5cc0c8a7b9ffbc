package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The harness on its own, no proxy: the real 4.0 JVM client against the shared server. When a proxy IT fails,
 * this one passing says the fault is in the proxy, not in the harness.
 */
@ExtendWith(SparkServerExtension.class)
class DirectSparkIT {

  private static SparkSession spark;

  @BeforeAll
  static void connect(SparkConnectServerProcess server) {
    spark = SparkClients.connect(server.directUrl());
  }

  @AfterAll
  static void disconnect() throws Exception {
    if (spark != null) {
      spark.close(); // ReleaseSession: fails server-side unless spark-mllib is on the server's
      // classpath
    }
  }

  @Test
  void serverAndClientAreSpark400(SparkConnectServerProcess server) {
    assertEquals("4.0.0", spark.version());
    assertEquals("4.0.0", server.sparkVersion());
  }

  @Test
  void countsARange() {
    assertEquals(10L, spark.range(10).count());
  }

  @Test
  void runsSql() {
    List<Row> rows =
        spark
            .sql("SELECT id % 3 AS k, count(*) AS n FROM range(30) GROUP BY k ORDER BY k")
            .collectAsList();
    assertEquals(3, rows.size());
    for (int k = 0; k < 3; k++) {
      assertEquals(k, rows.get(k).getLong(0));
      assertEquals(10L, rows.get(k).getLong(1));
    }
  }

  /**
   * About 70 MB of Arrow batches: far over the server's 1 s / 1 MiB stream limits, so the client has to resume
   * the result with ReattachExecute several times and must still see every row exactly once.
   */
  @Test
  void readsALargeResultThroughReattach(SparkConnectServerProcess server) throws Exception {
    long reattachesBefore = server.reattachCount();
    long rows = 3_000_000L;
    long count = 0;
    long sum = 0;
    Iterator<Row> it =
        spark
            .range(rows)
            .selectExpr("id", "id * 2 AS twice", "repeat('x', 8) AS pad")
            .toLocalIterator();
    try {
      while (it.hasNext()) {
        Row row = it.next();
        count++;
        sum += row.getLong(1);
      }
    } finally {
      // The client's iterator is AutoCloseable; left open, its last Arrow batch leaks and
      // session.close() throws "Memory was leaked by query" even after the iterator was drained.
      ((AutoCloseable) it).close();
    }
    assertEquals(rows, count);
    assertEquals(rows * (rows - 1), sum); // sum of 2*id for id in [0, rows)
    assertTrue(
        server.reattachCount() > reattachesBefore, "the result should have needed ReattachExecute");
  }
}
