package io.sparkgate;

import static io.sparkgate.testing.RawHttp2.ACK;
import static io.sparkgate.testing.RawHttp2.CONTINUATION;
import static io.sparkgate.testing.RawHttp2.GOAWAY;
import static io.sparkgate.testing.RawHttp2.HEADERS;
import static io.sparkgate.testing.RawHttp2.PING;
import static io.sparkgate.testing.RawHttp2.RST_STREAM;
import static io.sparkgate.testing.RawHttp2.SETTINGS;
import static io.sparkgate.testing.RawHttp2.WINDOW_UPDATE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import io.sparkgate.testing.MetricsScrape;
import io.sparkgate.testing.RawHttp2;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTP/2 attacks from a raw client ({@link RawHttp2}) on a real socket against a real proxy: each attacker is
 * cut off (GOAWAY and close) or refused, a well-behaved client's call through the same proxy succeeds
 * afterwards, the proxy's threads and heap stay where they were, and the metric counts the attack.
 * Attackers connect from 127.0.0.2, so the per-address limit never refuses the good client on 127.0.0.1.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
final class AbuseTest {
  private static final MethodDescriptor<byte[], byte[]> UNARY = TestMethods.get("ArtifactStatus");
  private static final String METHOD = UNARY.getFullMethodName();
  private static final int ENHANCE_YOUR_CALM = 0xb;
  private static final int MAX_STREAMS = 8;
  private static final int PER_ADDRESS = 16;

  private final FakeSparkConnect backend = new FakeSparkConnect();
  private Server backendServer;
  private Sparkgate proxy;
  private ManagedChannel good;
  private InetAddress attacker;
  private List<String> threadsBefore;
  private long heapBefore;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    backendServer = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(backend).build().start();
    Path config = dir.resolve("abuse.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "listen:",
            "  address: 127.0.0.1",
            "  port: 0",
            "  plaintext: true",
            "  max_concurrent_streams: " + MAX_STREAMS,
            "  handshake_timeout: 1s",
            "backend: {address: '127.0.0.1:" + backendServer.getPort() + "'}",
            "auth:",
            "  anonymous: true",
            "limits:",
            "  max_connections: 64",
            "  max_connections_per_address: " + PER_ADDRESS,
            "  max_header_bytes: 8KiB",
            "  max_stream_resets: 50",
            "  stream_reset_window: 10s",
            "admin: {address: 127.0.0.1, port: 0}",
            ""));
    proxy = Sparkgate.start(ProxyConfig.load(config));
    good = Channels.plaintext(proxy.port()).build();
    attacker = InetAddress.getByName("127.0.0.2");
    assertGoodCallServed();
  }

  @AfterAll
  void stop() throws Exception {
    good.shutdownNow();
    proxy.close();
    backendServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @BeforeEach
  void sample() {
    threadsBefore = threads();
    heapBefore = heapAfterGc();
  }

  /**
   * After every attack: a good call still succeeds, the attacker's connections are gone, and the proxy holds
   * no more threads (a few of the JVM's own may come and go) and no more heap (a few MiB of noise) than
   * before.
   */
  @AfterEach
  void bounded() throws Exception {
    assertGoodCallServed();
    Await.until("the attacker's connections to close", () -> openConnections() <= 1);
    List<String> threads = threads();
    assertTrue(
        threads.size() <= threadsBefore.size() + 2, "threads " + threadsBefore + " -> " + threads);
    long heap = heapAfterGc();
    assertTrue(
        heap <= heapBefore + 32L * 1024 * 1024,
        "heap " + (heapBefore >> 20) + " MiB -> " + (heap >> 20) + " MiB");
  }

  @Test
  void rapidReset_goawayEnhanceYourCalm() throws Exception {
    double before = metric("sparkgate_http2_abuse_total{kind=rapid_reset}");
    try (RawHttp2 h2 = RawHttp2.connect(attacker, proxy.port(), 0).preface()) {
      byte[] block = h2.requestHeaders(METHOD, Map.of());
      try {
        for (int stream = 1; stream < 2 * 1000; stream += 2) {
          h2.headers(stream, block, false);
          h2.frame(RST_STREAM, 0, stream, RawHttp2.int32(8)); // CANCEL
        }
        h2.flush();
      } catch (java.net.SocketException cutMidAttack) {
        // The proxy may answer and close before the whole attack is written (a loaded machine
        // writes it
        // slowly): its GOAWAY is still queued on our side and is read below.
      }
      RawHttp2.Frame goaway = h2.awaitGoawayAndClose(Await.TIMEOUT);
      assertNotNull(goaway, "closed without GOAWAY");
      assertEquals(ENHANCE_YOUR_CALM, goaway.errorCode(), goaway.debug());
    }
    awaitMetric("sparkgate_http2_abuse_total{kind=rapid_reset}", before + 1);
  }

  @Test
  void pingFlood_goawayEnhanceYourCalm() throws Exception {
    double before = metric("sparkgate_http2_abuse_total{kind=ping_flood}");
    try (RawHttp2 h2 = RawHttp2.connect(attacker, proxy.port(), 0).preface()) {
      for (int i = 0; i < 100; i++) {
        h2.frame(PING, 0, 0, new byte[8]);
      }
      h2.flush();
      RawHttp2.Frame goaway = h2.awaitGoawayAndClose(Await.TIMEOUT);
      assertNotNull(goaway, "closed without GOAWAY");
      assertEquals(ENHANCE_YOUR_CALM, goaway.errorCode(), goaway.debug());
      assertTrue(goaway.debug().contains("too_many_pings"), goaway.debug());
    }
    awaitMetric("sparkgate_http2_abuse_total{kind=ping_flood}", before + 1);
  }

  /**
   * SETTINGS from a client that never reads the ACKs: the answers pile up in the proxy until Netty's cap on
   * queued control frames closes the connection.
   */
  @Test
  void settingsFloodNotReading_connectionClosed() throws Exception {
    double before = metric("sparkgate_http2_abuse_total{kind=control_frame_flood}");
    try (RawHttp2 h2 = RawHttp2.connect(attacker, proxy.port(), 4096).preface()) {
      boolean cut = false;
      for (int i = 0; i < 4_000_000 && !cut; i++) {
        try {
          h2.frame(SETTINGS, 0, 0, new byte[0]);
          if (i % 1024 == 0) {
            h2.flush();
          }
        } catch (IOException closed) {
          cut = true;
        }
      }
      assertTrue(cut || h2.closedWithin(Await.TIMEOUT), "the flood was never cut off");
    }
    awaitMetric("sparkgate_http2_abuse_total{kind=control_frame_flood}", before + 1);
  }

  /** A header block that never ends: CONTINUATION after CONTINUATION, without END_HEADERS. */
  @Test
  void continuationFlood_goaway() throws Exception {
    double before = metric("sparkgate_http2_abuse_total{kind=headers_too_large}");
    try (RawHttp2 h2 = RawHttp2.connect(attacker, proxy.port(), 0).preface()) {
      byte[] block = h2.requestHeaders(METHOD, Map.of());
      h2.frame(HEADERS, 0, 1, block);
      byte[] filler = h2.requestHeaders(METHOD, Map.of("x-filler", "f".repeat(1000)));
      try {
        for (int i = 0; i < 10_000; i++) {
          h2.frame(CONTINUATION, 0, 1, filler);
        }
        h2.flush();
      } catch (IOException closed) {
        // cut off mid-flood
      }
      RawHttp2.Frame goaway = h2.awaitGoawayAndClose(Await.TIMEOUT);
      assertNotNull(goaway, "closed without GOAWAY");
    }
    awaitMetric("sparkgate_http2_abuse_total{kind=headers_too_large}", before + 1);
  }

  @Test
  void streamsBeyondTheLimit_refusedOneByOne() throws Exception {
    double before = metric("sparkgate_http2_abuse_total{kind=streams_refused}");
    try (RawHttp2 h2 = RawHttp2.connect(attacker, proxy.port(), 0).preface()) {
      byte[] block = h2.requestHeaders(METHOD, Map.of());
      int opened = 4 * MAX_STREAMS;
      for (int i = 0; i < opened; i++) {
        h2.headers(2 * i + 1, block, false);
      }
      h2.flush();
      int refused = 0;
      List<String> seen = new ArrayList<>();
      try {
        while (refused < opened - MAX_STREAMS) {
          RawHttp2.Frame f = h2.read();
          assertNotNull(f, "closed before refusing the streams over the limit: " + seen);
          seen.add(
              f.type() + "/" + f.stream() + (f.type() == RST_STREAM ? ":" + f.errorCode() : ""));
          if (f.type() == RST_STREAM && f.errorCode() == 0x7) {
            refused++;
          }
        }
      } catch (java.net.SocketTimeoutException e) {
        throw new AssertionError("frames received: " + seen, e);
      }
      assertEquals(opened - MAX_STREAMS, refused);
    }
    awaitMetric("sparkgate_http2_abuse_total{kind=streams_refused}", before + 3 * MAX_STREAMS);
  }

  @Test
  void windowUpdateOverflow_goawayFlowControlError() throws Exception {
    double before = metric("sparkgate_http2_abuse_total{kind=flow_control}");
    try (RawHttp2 h2 = RawHttp2.connect(attacker, proxy.port(), 0).preface()) {
      h2.frame(WINDOW_UPDATE, 0, 0, RawHttp2.int32(0x7fffffff));
      h2.frame(WINDOW_UPDATE, 0, 0, RawHttp2.int32(0x7fffffff));
      h2.flush();
      RawHttp2.Frame goaway = h2.awaitGoawayAndClose(Await.TIMEOUT);
      assertNotNull(goaway, "closed without GOAWAY");
      assertEquals(0x3, goaway.errorCode(), goaway.debug()); // FLOW_CONTROL_ERROR
    }
    awaitMetric("sparkgate_http2_abuse_total{kind=flow_control}", before + 1);
  }

  @Test
  void windowUpdateZero_goawayProtocolError() throws Exception {
    double before = metric("sparkgate_http2_abuse_total{kind=flow_control}");
    try (RawHttp2 h2 = RawHttp2.connect(attacker, proxy.port(), 0).preface()) {
      h2.frame(WINDOW_UPDATE, 0, 0, RawHttp2.int32(0));
      h2.flush();
      RawHttp2.Frame goaway = h2.awaitGoawayAndClose(Await.TIMEOUT);
      assertNotNull(goaway, "closed without GOAWAY");
      assertEquals(0x1, goaway.errorCode(), goaway.debug()); // PROTOCOL_ERROR
    }
    awaitMetric("sparkgate_http2_abuse_total{kind=flow_control}", before + 1);
  }

  /**
   * Connections that never start HTTP/2: those over the per-address limit are closed at once, the rest when
   * the handshake timeout (1 s here) passes; the good client, from another address, is served meanwhile.
   */
  @Test
  void idleHandshakesFromOneAddress_refusedOverTheLimit_closedAtTheTimeout() throws Exception {
    double refusedBefore =
        metric("sparkgate_connections_refused_total{reason=max_connections_per_address}");
    double unestablishedBefore = metric("sparkgate_connections_unestablished_total");
    int attempts = PER_ADDRESS + 8;
    RawHttp2[] slow = new RawHttp2[attempts];
    try {
      for (int i = 0; i < attempts; i++) {
        slow[i] = RawHttp2.connect(attacker, proxy.port(), 0);
      }
      awaitMetric(
          "sparkgate_connections_refused_total{reason=max_connections_per_address}",
          refusedBefore + 8);
      assertGoodCallServed();
      // The proxy closes each (the test never does before the end): the refused ones at once, the
      // rest
      // once the handshake timeout has passed.
      for (RawHttp2 c : slow) {
        assertTrue(c.closedWithin(Await.TIMEOUT), "a connection outlived the timeout");
      }
    } finally {
      for (RawHttp2 c : slow) {
        if (c != null) c.close();
      }
    }
    // Every admitted one was closed before it set up HTTP/2, and no other connection was.
    awaitMetric("sparkgate_connections_unestablished_total", unestablishedBefore + PER_ADDRESS);
    assertEquals(
        unestablishedBefore + PER_ADDRESS, metric("sparkgate_connections_unestablished_total"));
    assertEquals(
        refusedBefore + 8,
        metric("sparkgate_connections_refused_total{reason=max_connections_per_address}"));
  }

  /**
   * A real gRPC client whose bearer token is longer than {@code limits.max_header_bytes}: a clear error that
   * names the limit, not {@code INTERNAL: http2 exception}.
   */
  @Test
  void tokenOverTheHeaderLimit_clearError() throws Exception {
    ManagedChannel client = Channels.plaintext(proxy.port()).build();
    try {
      io.grpc.StatusRuntimeException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              io.grpc.StatusRuntimeException.class,
              () ->
                  ClientCalls.blockingUnaryCall(
                      io.grpc.ClientInterceptors.intercept(
                          client, Channels.bearer("t".repeat(12 * 1024))),
                      UNARY,
                      CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                      artifactStatus()));
      String description = String.valueOf(e.getStatus().getDescription());
      assertEquals(io.grpc.Status.Code.UNAUTHENTICATED, e.getStatus().getCode(), description);
      assertTrue(
          description.contains("token is too long") && description.contains("8192 bytes"),
          description);
    } finally {
      client.shutdownNow();
    }
  }

  /** Other headers over the limit: RESOURCE_EXHAUSTED naming the limit; the call never starts. */
  @Test
  void headersOverTheLimit_clearError() throws Exception {
    ManagedChannel client = Channels.plaintext(proxy.port()).build();
    try {
      io.grpc.Metadata big = new io.grpc.Metadata();
      for (int i = 0; i < 10; i++) {
        big.put(
            io.grpc.Metadata.Key.of("x-big-" + i, io.grpc.Metadata.ASCII_STRING_MARSHALLER),
            "v".repeat(1000));
      }
      int callsBefore = backend.calls.get();
      io.grpc.StatusRuntimeException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              io.grpc.StatusRuntimeException.class,
              () ->
                  ClientCalls.blockingUnaryCall(
                      io.grpc.ClientInterceptors.intercept(
                          client, io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(big)),
                      UNARY,
                      CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                      artifactStatus()));
      assertEquals(io.grpc.Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
      assertEquals(
          "request headers exceed 8192 bytes (limits.max_header_bytes)",
          e.getStatus().getDescription());
      assertEquals(callsBefore, backend.calls.get(), "the call reached the backend");
    } finally {
      client.shutdownNow();
    }
  }

  /** A GOAWAY frame from the client is not abuse; the count of abuse stays where it was. */
  @Test
  void clientGoaway_notCounted() throws Exception {
    double before = abuseTotal();
    try (RawHttp2 h2 = RawHttp2.connect(attacker, proxy.port(), 0).preface()) {
      h2.frame(PING, ACK, 0, new byte[8]);
      h2.frame(GOAWAY, 0, 0, new byte[8]);
      h2.flush();
      h2.closedWithin(Duration.ofSeconds(5));
    }
    assertGoodCallServed();
    assertEquals(before, abuseTotal());
  }

  private double abuseTotal() throws Exception {
    return MetricsScrape.get(proxy.metricsPort()).entrySet().stream()
        .filter(e -> e.getKey().startsWith("sparkgate_http2_abuse_total"))
        .mapToDouble(Map.Entry::getValue)
        .sum();
  }

  /** A request the proxy's stages read as a real client's: a session and a user. */
  static byte[] artifactStatus() {
    return org.apache.spark.connect.proto.ArtifactStatusesRequest.newBuilder()
        .setSessionId(java.util.UUID.randomUUID().toString())
        .setUserContext(
            org.apache.spark.connect.proto.UserContext.newBuilder().setUserId("good").build())
        .addNames("cache/x")
        .build()
        .toByteArray();
  }

  private void assertGoodCallServed() {
    byte[] response =
        ClientCalls.blockingUnaryCall(
            good,
            UNARY,
            CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
            artifactStatus());
    assertArrayEquals("ok".getBytes(StandardCharsets.UTF_8), response);
  }

  private double openConnections() throws Exception {
    return metric("sparkgate_connections_open");
  }

  private double metric(String series) throws Exception {
    Double v = MetricsScrape.get(proxy.metricsPort()).get(series);
    assertNotNull(v, series + " is not exported");
    return v;
  }

  private void awaitMetric(String series, double atLeast) throws Exception {
    Await.until(series + " to reach " + atLeast, () -> metric(series) >= atLeast);
  }

  /**
   * The proxy's own live threads (event loops, worker pool, timers), by name. Not the JVM's others: the
   * test's clients share gRPC's executors and event loops, which start and retire threads as they like, and
   * so does the metrics scraper's java.net.http.
   */
  static List<String> threads() {
    return Thread.getAllStackTraces().keySet().stream()
        .map(Thread::getName)
        .filter(name -> name.startsWith("sparkgate-"))
        .sorted()
        .toList();
  }

  private static long heapAfterGc() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
