package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.sparkgate.Sparkgate;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.MetricsScrape;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Backends that fail under the proxy, each a real peer: a Spark Connect server of this class's own, killed
 * (SIGKILL) in the middle of a large result and then started again on the same port; a TCP server that
 * accepts and never answers; one that answers the HTTP/2 preface with garbage. The client gets a clear
 * error within a bounded time, never a hang, and the proxy's calls and resources are released.
 *
 * <p>The Spark server here is not the suite's shared one (it is killed); two starts cost 30-40 s in all.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BackendFaultsIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration BOUND = Duration.ofSeconds(30);

  private static Path dir;
  private static SparkConnectServerProcess server;
  private static Sparkgate proxy;
  private static Path auditFile;
  private static final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    dir = ProxyConfigs.freshDir("backend-faults");
    server =
        SparkConnectServerProcess.start(
            SparkServerExtension.classpathFile(), dir.resolve("spark"), Map.of());
    auditFile = dir.resolve("audit.jsonl");
    proxy =
        Sparkgate.start(
            ProxyConfigs.write(
                dir,
                ProxyConfigs.PLAINTEXT_LISTENER,
                "backend: {address: '127.0.0.1:" + server.port() + "', handshake_timeout: 2s}",
                "auth:",
                "  anonymous: true",
                "audit: {file: audit.jsonl, fsync: never}",
                "admin: {address: 127.0.0.1, port: 0}"));
  }

  @AfterAll
  static void stop() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
    ProxyConfigs.closeAll(proxy, server);
  }

  // --- a Spark server killed mid-stream, then restarted on its port

  @Test
  @Order(1)
  void serverKilledMidStream_clientGetsUnavailable_auditSaysSo_callReleased() throws Exception {
    ManagedChannel channel = channelTo(proxy.port());
    try {
      String operation = UUID.randomUUID().toString();
      byte[] request =
          ConnectRequests.sqlRequest(
                  UUID.randomUUID().toString(),
                  "faults",
                  "SELECT id, repeat('x', 200) AS pad FROM range(0, 200000000)")
              .toBuilder()
              .setOperationId(operation)
              .build()
              .toByteArray();
      AtomicInteger responses = new AtomicInteger();
      CompletableFuture<Status> closed = new CompletableFuture<>();
      ClientCall<byte[], byte[]> call =
          channel.newCall(ConnectRequests.EXECUTE_PLAN, CallOptions.DEFAULT);
      call.start(
          new ClientCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
              responses.incrementAndGet();
              call.request(1);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              closed.complete(status);
            }
          },
          new Metadata());
      call.sendMessage(request);
      call.halfClose();
      call.request(1);
      Await.until("result batches streaming", Duration.ofSeconds(120), () -> responses.get() >= 3);
      assertEquals(1.0, activeCalls(), "the streaming call is live in the proxy");

      long killedAt = System.nanoTime();
      server.kill();
      Status status = closed.get(BOUND.toSeconds(), TimeUnit.SECONDS);
      Duration took = Duration.ofNanos(System.nanoTime() - killedAt);
      assertEquals(Status.Code.UNAVAILABLE, status.getCode(), status.toString());
      assertTrue(took.compareTo(BOUND) < 0, "the error came after " + took);

      JsonNode record =
          Await.value(
              "the call's audit record",
              () -> record(r -> operation.equals(r.path("operation_id").asText())),
              r -> r != null);
      assertEquals("UNAVAILABLE", record.path("status").asText(), record.toString());
      assertFalse(record.path("status_message").asText().isEmpty(), record.toString());
      assertTrue(record.path("bytes_out").asLong() > 0, record.toString());
      Await.until("the proxy to release the call", () -> activeCalls() == 0.0);
    } finally {
      channel.shutdownNow();
    }
  }

  @Test
  @Order(2)
  void restartedServer_lostSessionGetsSparksSessionError_newSessionsWork() throws Exception {
    // A new server (the last test killed it) and a session that it will lose.
    int port = server.port();
    if (server.isAlive()) {
      server.kill();
    }
    server =
        SparkConnectServerProcess.start(
            SparkServerExtension.classpathFile(),
            dir.resolve("spark-2"),
            Map.of(),
            Duration.ofSeconds(120),
            port);
    String url = "sc://localhost:" + proxy.port();
    // The last test's kill marked the backend down; the proxy refuses at once (no backend) until
    // its health check sees the new server, which the fail-fast client would not wait for.
    Await.until("the proxy to see the new server up", () -> proxy.readiness().ready());
    SparkSession before = SparkClients.connectFailFast(url);
    closing.add(before);
    assertEquals(1L, before.sql("SELECT 1 AS one").collectAsList().get(0).getInt(0));

    server.kill();
    server =
        SparkConnectServerProcess.start(
            SparkServerExtension.classpathFile(),
            dir.resolve("spark-3"),
            Map.of(),
            Duration.ofSeconds(120),
            port);

    // The proxy's connection comes back on its own (gRPC's reconnect backoff); until then calls
    // fail fast with UNAVAILABLE. After it, the old session's call must meet Spark's own error.
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    String message = null;
    while (System.nanoTime() < deadline) {
      try {
        before.sql("SELECT 2").collectAsList();
        message = "<no error>";
        break;
      } catch (Throwable e) { // RetriesExceeded is a Throwable
        message = String.valueOf(e.getMessage()) + " " + e;
        if (!message.contains("UNAVAILABLE") && !(e.toString().contains("RetriesExceeded"))) {
          break;
        }
        Thread.sleep(500);
      }
    }
    assertNotNull(message);
    assertTrue(
        message.contains("INVALID_HANDLE.SESSION_CHANGED")
            || message.contains("INVALID_HANDLE.SESSION_NOT_FOUND"),
        message);

    Await.until("the proxy to see the restarted server up", () -> proxy.readiness().ready());
    try (SparkSession after = SparkClients.connectFailFast(url)) {
      assertEquals(3L, after.sql("SELECT 3 AS three").collectAsList().get(0).getInt(0));
    }
    Await.until("no call left in the proxy", () -> activeCalls() == 0.0);
  }

  // --- backends that do not speak HTTP/2

  @Test
  @Order(3)
  void silentBackend_handshakeTimeoutFailsTheCall_withUnavailable() throws Exception {
    try (FakeBackend silent = FakeBackend.silent();
        Sparkgate gate =
            Sparkgate.start(
                ProxyConfigs.write(
                    ProxyConfigs.freshDir("silent-backend"),
                    ProxyConfigs.PLAINTEXT_LISTENER,
                    "backend: {address: '127.0.0.1:" + silent.port() + "', handshake_timeout: 1s}",
                    "auth:",
                    "  anonymous: true"))) {
      ManagedChannel channel = channelTo(gate.port());
      try {
        long start = System.nanoTime();
        Status status =
            execute(channel, CallOptions.DEFAULT); // no deadline: only the proxy bounds it
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertEquals(Status.Code.UNAVAILABLE, status.getCode(), status.toString());
        assertTrue(took.compareTo(Duration.ofSeconds(20)) < 0, "took " + took);
        assertTrue(silent.accepted() >= 1, "the proxy did connect");
      } finally {
        channel.shutdownNow();
      }
    }
  }

  @Test
  @Order(4)
  void silentBackend_theClientsDeadlineApplies() throws Exception {
    try (FakeBackend silent = FakeBackend.silent();
        Sparkgate gate =
            Sparkgate.start(
                ProxyConfigs.write(
                    ProxyConfigs.freshDir("silent-backend-deadline"),
                    ProxyConfigs.PLAINTEXT_LISTENER,
                    "backend: {address: '127.0.0.1:" + silent.port() + "', handshake_timeout: 5m}",
                    "auth:",
                    "  anonymous: true"))) {
      ManagedChannel channel = channelTo(gate.port());
      try {
        long start = System.nanoTime();
        Status status =
            execute(channel, CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.SECONDS));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertEquals(Status.Code.DEADLINE_EXCEEDED, status.getCode(), status.toString());
        assertTrue(took.compareTo(Duration.ofSeconds(15)) < 0, "took " + took);
      } finally {
        channel.shutdownNow();
      }
    }
  }

  @Test
  @Order(5)
  void garbageFrames_clearErrorToTheClient_proxyStaysHealthy() throws Exception {
    try (FakeBackend garbage = FakeBackend.garbage();
        Sparkgate gate =
            Sparkgate.start(
                ProxyConfigs.write(
                    ProxyConfigs.freshDir("garbage-backend"),
                    ProxyConfigs.PLAINTEXT_LISTENER,
                    "backend: {address: '127.0.0.1:" + garbage.port() + "'}",
                    "auth:",
                    "  anonymous: true",
                    "admin: {address: 127.0.0.1, port: 0}"))) {
      ManagedChannel channel = channelTo(gate.port());
      try {
        for (int i = 0; i < 3; i++) {
          Status status =
              execute(channel, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS));
          assertEquals(Status.Code.UNAVAILABLE, status.getCode(), status.toString());
          if (i == 0) {
            assertTrue(
                String.valueOf(status.getDescription()).contains("broke the HTTP/2 protocol"),
                status.toString());
          }
        }
        assertTrue(garbage.accepted() >= 1);
        // Still serving: its own endpoints answer and no call is left behind.
        assertEquals(0.0, MetricsScrape.get(gate.adminPort()).get("sparkgate_calls_active"));
      } finally {
        channel.shutdownNow();
      }
    }
  }

  // --- helpers

  private static ManagedChannel channelTo(int port) {
    return Grpc.newChannelBuilderForAddress("127.0.0.1", port, InsecureChannelCredentials.create())
        .maxInboundMessageSize(64 * 1024 * 1024)
        .build();
  }

  /** A small ExecutePlan through the proxy; its final status. */
  private static Status execute(ManagedChannel channel, CallOptions options) throws Exception {
    CompletableFuture<Status> closed = new CompletableFuture<>();
    ClientCall<byte[], byte[]> call = channel.newCall(ConnectRequests.EXECUTE_PLAN, options);
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(byte[] message) {
            call.request(1);
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            closed.complete(status);
          }
        },
        new Metadata());
    call.sendMessage(
        ConnectRequests.sqlRequest(UUID.randomUUID().toString(), "faults", "SELECT 1")
            .toByteArray());
    call.halfClose();
    call.request(1);
    return closed.get(60, TimeUnit.SECONDS);
  }

  private static double activeCalls() throws Exception {
    return MetricsScrape.get(proxy.adminPort()).getOrDefault("sparkgate_calls_active", -1.0);
  }

  private static JsonNode record(java.util.function.Predicate<JsonNode> match) throws Exception {
    if (!Files.exists(auditFile)) {
      return null;
    }
    for (String line : Files.readAllLines(auditFile)) {
      JsonNode r = JSON.readTree(line);
      if (match.test(r)) {
        return r;
      }
    }
    return null;
  }

  /**
   * A TCP server that accepts connections and then either never answers (reading nothing) or answers with
   * bytes that are not HTTP/2 frames.
   */
  private static final class FakeBackend implements AutoCloseable {
    private final ServerSocket socket;
    private final List<Socket> held = new ArrayList<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private final Thread thread;

    private FakeBackend(boolean garbage) throws Exception {
      socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      thread =
          new Thread(
              () -> {
                while (!socket.isClosed()) {
                  try {
                    Socket s = socket.accept();
                    accepted.incrementAndGet();
                    synchronized (held) {
                      held.add(s);
                    }
                    if (garbage) {
                      answerWithGarbage(s);
                    }
                  } catch (Exception e) {
                    return;
                  }
                }
              },
              "fake-backend");
      thread.setDaemon(true);
      thread.start();
    }

    static FakeBackend silent() throws Exception {
      return new FakeBackend(false);
    }

    static FakeBackend garbage() throws Exception {
      return new FakeBackend(true);
    }

    /**
     * After the client's preface arrives, an HTTP/1.1 answer and then a frame header with an invalid length and
     * type: neither is an HTTP/2 server's SETTINGS.
     */
    private static void answerWithGarbage(Socket s) throws Exception {
      InputStream in = s.getInputStream();
      byte[] buffer = new byte[24];
      int read = 0;
      while (read < buffer.length) {
        int n = in.read(buffer, read, buffer.length - read);
        if (n < 0) return;
        read += n;
      }
      OutputStream out = s.getOutputStream();
      out.write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.write(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x42, 0x13, 0x7f, 0, 0, 1});
      out.flush();
    }

    int port() {
      return socket.getLocalPort();
    }

    int accepted() {
      return accepted.get();
    }

    @Override
    public void close() throws Exception {
      socket.close();
      synchronized (held) {
        for (Socket s : held) {
          s.close();
        }
      }
      thread.join(5000);
    }
  }
}
