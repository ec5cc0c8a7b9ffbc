package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.audit.AuditVerifier;
import io.sparkgate.testing.Await;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connect.client.SparkConnectClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The proxy as operators run it ({@code java -jar target/sparkgate.jar serve}) stopped with SIGTERM while the
 * real JVM client streams a long result from a real Spark server through it: readiness turns false at once,
 * new calls are still served during {@code listen.drain_delay}, then refused (GOAWAY), while the running
 * stream carries on to its last row; the proxy then exits with every call's audit record written.
 */
@ExtendWith(SparkServerExtension.class)
final class DrainIT {
  private static final Duration DRAIN_DELAY = Duration.ofSeconds(8);

  private static final long ROWS = 2_000_000;

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void sigterm_readinessFalseAtOnce_newCallsDuringTheDelay_runningStreamCompletes(
      SparkConnectServerProcess server) throws Exception {
    Path dir = ProxyConfigs.freshDir("drain");
    int port = freePort();
    int adminPort = freePort();
    Path audit = dir.resolve("audit.jsonl");
    Files.writeString(
        dir.resolve("sparkgate.yaml"),
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: "
                + port
                + ", plaintext: true, drain_delay: "
                + DRAIN_DELAY.toSeconds()
                + "s, shutdown_grace: 60s}",
            ProxyConfigs.backend(server.port()),
            "audit: {file: audit.jsonl}",
            "admin: {port: " + adminPort + "}",
            "auth: {anonymous: true}",
            ""));
    Process proxy = ShippedJar.serve(dir.resolve("sparkgate.yaml"), dir, dir.resolve("proxy.log"));
    String url = "sc://127.0.0.1:" + port;
    try {
      Await.until(
          "the proxy to be ready",
          Duration.ofSeconds(60),
          () -> {
            HttpResponse<String> r = readyz(adminPort);
            return proxy.isAlive() && r != null && r.statusCode() == 200;
          });
      // One stream for the whole result: the test server ends reattachable streams every second
      // (for the other tests' sake), and a reattach after GOAWAY belongs to another replica, not to
      // this proxy.
      SparkSession streaming =
          org.apache.spark.sql.connect.SparkSession.builder()
              .client(
                  SparkConnectClient.builder()
                      .connectionString(url)
                      .disableReattachableExecute()
                      .build())
              .create();
      Iterator<Row> rows =
          streaming.range(0, ROWS, 1, 8).selectExpr("id", "id * 3 AS x").toLocalIterator();
      long read = 0;
      long sum = 0;
      while (read < 1000 && rows.hasNext()) {
        sum += rows.next().getLong(0);
        read++;
      }
      assertEquals(1000, read, "the stream started");

      proxy.destroy(); // SIGTERM
      long termAt = System.nanoTime();
      HttpResponse<String> notReady =
          Await.value(
              "readiness false after SIGTERM",
              Duration.ofSeconds(5),
              () -> readyz(adminPort),
              r -> r != null && r.statusCode() == 503);
      long notReadyMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - termAt);
      assertTrue(notReady.body().contains("draining"), notReady.body());
      assertTrue(notReadyMs < 2000, "readiness turned false after " + notReadyMs + " ms");

      // Still in the drain delay: a new client session is served.
      try (SparkSession late = SparkClients.connectFailFast(url)) {
        // Answered on the driver, without tasks: the stream's tasks hold both of local[2]'s slots.
        assertEquals(
            42,
            late.sql("SELECT 42 AS answer").collectAsList().get(0).getInt(0),
            "a call during drain_delay is served");
      }

      // After the delay: GOAWAY; a new client is refused (the running stream is not read
      // meanwhile).
      Thread.sleep(
          Math.max(
              0,
              DRAIN_DELAY.toMillis()
                  + 1500
                  - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - termAt)));
      // (Not closed: its ReleaseSession could not reach the proxy either.)
      // RetriesExceeded, the client's "could not reach the server", is a Throwable.
      assertThrows(
          Throwable.class,
          () -> SparkClients.connectFailFast(url).sql("SELECT 42 AS answer").collectAsList(),
          "a call after the drain delay");
      assertTrue(proxy.isAlive(), "the proxy waits for the running stream");

      while (rows.hasNext()) {
        sum += rows.next().getLong(0);
        read++;
      }
      ((AutoCloseable) rows).close();
      assertEquals(ROWS, read, "every row of the running stream arrived");
      assertEquals(ROWS * (ROWS - 1) / 2, sum);

      assertTrue(proxy.waitFor(60, TimeUnit.SECONDS), "the proxy exits once the stream is done");
    } finally {
      // The streaming session is not closed: its ReleaseSession would go to the stopped proxy, and
      // this client retries that for minutes.
      proxy.destroyForcibly();
    }

    String log = Files.readString(dir.resolve("proxy.log"));
    assertTrue(log.contains("draining: not ready"), log);
    assertFalse(log.contains("cancelling them"), "no call was cut off by shutdown_grace");
    AuditVerifier.Result verified = AuditVerifier.verify(List.of(audit));
    assertTrue(verified.ok(), verified.message());
    ObjectMapper json = new ObjectMapper();
    long okStreams = 0;
    for (String line : Files.readAllLines(audit)) {
      JsonNode r = json.readTree(line);
      if ("ExecutePlan".equals(r.path("rpc").asText()) && "OK".equals(r.path("status").asText())) {
        okStreams++;
      }
    }
    assertTrue(okStreams >= 2, "the long stream and the late call are audited as OK: " + okStreams);
  }

  private HttpResponse<String> readyz(int adminPort) throws Exception {
    try {
      return http.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/readyz"))
              .timeout(Duration.ofSeconds(2))
              .build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException notListening) {
      return null;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
