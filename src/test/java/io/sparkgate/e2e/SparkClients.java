package io.sparkgate.e2e;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connect.client.RetryPolicy;
import org.apache.spark.sql.connect.client.SparkConnectClient;
import scala.Option;

/** Real Spark JVM client sessions for the end-to-end tests. */
final class SparkClients {

  private SparkClients() {}

  /**
   * A new session (never the JVM's cached default one, so a test's URL, token and trust really apply). Use
   * {@code create()}, not {@code getOrCreate()}: the latter hands back whatever session an earlier class left.
   */
  static SparkSession connect(String url) {
    return SparkSession.builder().remote(url).create();
  }

  /**
   * A session that does not retry failed RPCs. The default policy retries UNAVAILABLE (which is what a refused
   * TLS handshake looks like) with backoff growing to minutes, so a test expecting a refusal would hang; use this
   * there; the refusal then surfaces at once as {@code RetriesExceeded} (message null) instead of after minutes.
   * Normal ReattachExecute after a server-ended stream is not a retry and still happens.
   */
  /**
   * Reads a result row by row with toLocalIterator and returns the count. The iterator is closed even after
   * the last row: left open, the client's Arrow allocator reports a leak when the session closes.
   */
  static long countRows(org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> result)
      throws Exception {
    java.util.Iterator<org.apache.spark.sql.Row> it = result.toLocalIterator();
    long count = 0;
    try {
      while (it.hasNext()) {
        it.next();
        count++;
      }
    } finally {
      ((AutoCloseable) it).close();
    }
    return count;
  }

  static SparkSession connectFailFast(String url) {
    RetryPolicy defaults = RetryPolicy.defaultPolicy();
    RetryPolicy noRetries =
        defaults.copy(
            Option.apply(0),
            defaults.initialBackoff(),
            defaults.maxBackoff(),
            defaults.backoffMultiplier(),
            defaults.jitter(),
            defaults.minJitterThreshold(),
            defaults.canRetry(),
            "sparkgate-e2e-no-retries");
    SparkConnectClient client =
        SparkConnectClient.builder().connectionString(url).retryPolicy(noRetries).build();
    return org.apache.spark.sql.connect.SparkSession.builder().client(client).create();
  }
}
