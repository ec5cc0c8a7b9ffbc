package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.stub.ClientCalls;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import io.sparkgate.testing.MetricsScrape;
import io.sparkgate.tls.DevCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Slowloris over TLS: many connections from one address that open TCP to the proxy's TLS listener and then
 * send nothing, or dribble a real ClientHello one byte a second. Those over {@code
 * limits.max_connections_per_address} are closed as they are accepted and the rest stay open; the rest are
 * closed by the proxy at {@code listen.handshake_timeout}, the dribblers too (the timeout runs from the
 * connection's start, bytes do not extend it); meanwhile a real gRPC client's new TLS connection and call from
 * another address succeed, the proxy's threads and heap stay where they were, and the metrics count both
 * refusals and timeouts. Attackers connect from 127.0.0.2, the good client from 127.0.0.1.
 *
 * <p>Nothing here measures time. Which connections the proxy closed, and why, is read from the connections'
 * states and the proxy's counters; a handshake timeout far beyond the test's life stands for "not yet", and
 * bytes extending the timeout would keep a dribbler open for minutes, far past any wait here.
 */
final class SlowTlsHandshakeTest {
  private static final MethodDescriptor<byte[], byte[]> UNARY = TestMethods.get("ArtifactStatus");
  private static final int PER_ADDRESS = 100;
  private static final String REFUSED =
      "sparkgate_connections_refused_total{reason=max_connections_per_address}";
  private static final String UNESTABLISHED = "sparkgate_connections_unestablished_total";

  @TempDir Path dir;
  private DevCertificates.Generated certs;
  private Server backendServer;
  private final List<Socket> attackers = new ArrayList<>();
  private Thread dribbler;

  @BeforeEach
  void start() throws Exception {
    certs = DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    backendServer = new FakeSparkConnect().serve();
  }

  @AfterEach
  void stop() throws Exception {
    if (dribbler != null) {
      dribbler.interrupt();
      dribbler.join(5000);
    }
    for (Socket s : attackers) {
      s.close();
    }
    backendServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void overThePerAddressLimit_closedAsAccepted_restHeldOpen_goodClientServed() throws Exception {
    try (Sparkgate proxy = start("5m")) { // the longest the configuration allows
      assertGoodCallServed(proxy);
      double refusedBefore = metric(proxy, REFUSED);

      connectAttackers(proxy, 2 * PER_ADDRESS);
      Await.until(
          "the connections over the per-address limit to be refused",
          () -> metric(proxy, REFUSED) >= refusedBefore + PER_ADDRESS);
      assertEquals(
          refusedBefore + PER_ADDRESS,
          metric(proxy, REFUSED),
          "exactly the connections over the limit are refused");
      boolean[] closed = new boolean[attackers.size()];
      Await.until(
          "the refused connections to be seen closed",
          () -> sweep(attackers, closed) >= PER_ADDRESS);

      // A new client from another address is served meanwhile.
      assertGoodCallServed(proxy);
      // The admitted ones are all still open: nothing but a handshake timeout minutes away closes
      // them.
      assertEquals(
          PER_ADDRESS, sweep(attackers, closed), "connections within the limit were closed");
    }
  }

  @Test
  void slowHandshakes_closedAtTheTimeout_dribblersToo_goodClientServed_resourcesBounded()
      throws Exception {
    try (Sparkgate proxy = start("2s")) {
      // Warm up: the proxy's TLS, the test client's event loops and the backend connection exist
      // before the threads and the heap are sampled.
      assertGoodCallServed(proxy);
      List<String> threadsBefore = AbuseTest.threads();
      long heapBefore = heapAfterGc();
      double refusedBefore = metric(proxy, REFUSED);
      double unestablishedBefore = metric(proxy, UNESTABLISHED);

      connectAttackers(proxy, PER_ADDRESS);
      // Every other connection dribbles its ClientHello, a byte a second, from one thread; the rest
      // are silent. A write to a connection the proxy closed fails, and that connection is left
      // alone.
      List<Socket> dribbling = new ArrayList<>();
      for (int i = 0; i < attackers.size(); i += 2) {
        dribbling.add(attackers.get(i));
      }
      byte[] clientHello = clientHello(proxy.port());
      dribbler = new Thread(() -> dribble(dribbling, clientHello), "test-dribbler");
      dribbler.setDaemon(true);
      dribbler.start();

      // Meanwhile a real client, on a new TLS connection, is served.
      List<String> threadsDuring = AbuseTest.threads();
      assertGoodCallServed(proxy);

      // The proxy closes every one: a ClientHello takes minutes at a byte a second, so a timeout
      // that bytes extended would keep the dribblers open far past this wait.
      boolean[] closed = new boolean[attackers.size()];
      Await.until(
          "every attacker connection to be closed by the proxy",
          () -> sweep(attackers, closed) == PER_ADDRESS);
      // Each was admitted and closed before its TLS and HTTP/2 set-up completed: the timeout's
      // work.
      Await.until(
          "the timed-out connections to be counted",
          () -> metric(proxy, UNESTABLISHED) >= unestablishedBefore + PER_ADDRESS);
      assertEquals(unestablishedBefore + PER_ADDRESS, metric(proxy, UNESTABLISHED));
      assertEquals(refusedBefore, metric(proxy, REFUSED), "none was over the limit");
      Await.until(
          "the proxy to hold no attacker connection",
          () -> metric(proxy, "sparkgate_connections_open") <= 1);

      List<String> threadsAfter = AbuseTest.threads();
      long heapAfter = heapAfterGc();
      assertTrue(
          threadsDuring.size() <= threadsBefore.size() + 4
              && threadsAfter.size() <= threadsBefore.size() + 4,
          "threads " + threadsBefore + " -> " + threadsDuring + " -> " + threadsAfter);
      assertTrue(
          heapAfter <= heapBefore + 32L * 1024 * 1024,
          "heap " + (heapBefore >> 20) + " MiB -> " + (heapAfter >> 20) + " MiB");
      assertGoodCallServed(proxy);
    }
  }

  private Sparkgate start(String handshakeTimeout) throws Exception {
    Files.writeString(
        dir.resolve("sparkgate.yaml"),
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0, handshake_timeout: " + handshakeTimeout + "}",
            "tls: {cert_file: certs/server.pem, key_file: certs/server.key}",
            "backend: {address: '127.0.0.1:" + backendServer.getPort() + "'}",
            "auth: {anonymous: true}",
            "limits: {max_connections: 1000, max_connections_per_address: " + PER_ADDRESS + "}",
            "admin: {address: 127.0.0.1, port: 0}",
            ""));
    return Sparkgate.start(ProxyConfig.load(dir.resolve("sparkgate.yaml")));
  }

  /** Opens {@code n} TCP connections to the proxy from 127.0.0.2, sending nothing. */
  private void connectAttackers(Sparkgate proxy, int n) throws IOException {
    InetAddress from = InetAddress.getByName("127.0.0.2");
    for (int i = 0; i < n; i++) {
      Socket s = new Socket();
      s.bind(new InetSocketAddress(from, 0));
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), proxy.port()), 5000);
      attackers.add(s);
    }
  }

  /** A real TLS ClientHello for the proxy, as the JDK's client writes it. */
  private static byte[] clientHello(int port) throws Exception {
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, null, null);
    SSLEngine engine = context.createSSLEngine("localhost", port);
    engine.setUseClientMode(true);
    ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
    engine.wrap(ByteBuffer.allocate(0), out);
    out.flip();
    byte[] hello = new byte[out.remaining()];
    out.get(hello);
    assertTrue(hello.length > 100 && hello[0] == 0x16, "not a TLS handshake record");
    return hello;
  }

  /** One byte a second to each connection, until interrupted or the ClientHello is out. */
  private static void dribble(List<Socket> sockets, byte[] hello) {
    boolean[] dead = new boolean[sockets.size()];
    for (int at = 0; at < hello.length && !Thread.currentThread().isInterrupted(); at++) {
      for (int i = 0; i < sockets.size(); i++) {
        if (!dead[i]) {
          try {
            sockets.get(i).getOutputStream().write(hello[at]);
          } catch (IOException closed) {
            dead[i] = true;
          }
        }
      }
      try {
        Thread.sleep(1000);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Looks at each connection not yet seen closed; the number seen closed so far. */
  private static int sweep(List<Socket> sockets, boolean[] closed) throws IOException {
    int n = 0;
    for (int i = 0; i < sockets.size(); i++) {
      if (!closed[i] && closedByPeer(sockets.get(i))) {
        closed[i] = true;
      }
      if (closed[i]) {
        n++;
      }
    }
    return n;
  }

  /** Whether the proxy has closed this connection: end of stream or a reset, within a short read. */
  private static boolean closedByPeer(Socket s) throws IOException {
    s.setSoTimeout(1);
    InputStream in = s.getInputStream();
    try {
      byte[] buf = new byte[4096];
      while (true) {
        if (in.read(buf) < 0) {
          return true;
        }
      }
    } catch (SocketTimeoutException open) {
      return false;
    } catch (SocketException reset) {
      return true;
    }
  }

  private void assertGoodCallServed(Sparkgate proxy) throws IOException {
    ManagedChannel good = Channels.tls(proxy.port(), certs.caCert()).build();
    try {
      byte[] response =
          ClientCalls.blockingUnaryCall(
              good,
              UNARY,
              CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS),
              AbuseTest.artifactStatus());
      assertArrayEquals("ok".getBytes(StandardCharsets.UTF_8), response);
    } finally {
      good.shutdownNow();
    }
  }

  private static double metric(Sparkgate proxy, String series) throws Exception {
    Double v = MetricsScrape.get(proxy.metricsPort()).get(series);
    assertNotNull(v, series + " is not exported");
    return v;
  }

  private static long heapAfterGc() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
