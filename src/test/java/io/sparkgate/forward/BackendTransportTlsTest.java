package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.protobuf.services.HealthStatusManager;
import io.sparkgate.tls.BackendTls;
import io.sparkgate.tls.DevCertificates;
import io.sparkgate.tls.ServerTls;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend connection over TLS, against real TLS servers on loopback: the backend's certificate is checked
 * by chain and by name, the proxy's client certificate reaches a server that requires one, a renewed CA file
 * reaches new connections without a new context, and the handshake timeout covers a server that completes
 * TLS and then never speaks HTTP/2 (a TLS terminator in front of a hung Spark server).
 */
final class BackendTransportTlsTest {
  private static final Duration RELOAD = Duration.ofMillis(100);

  @TempDir Path dir;
  private DevCertificates.Generated certs;
  private Path otherCa;
  private Server server; // requires a client certificate from certs' CA
  private ServerTls serverTls;
  private BackendTls tls;

  @BeforeEach
  void start() throws Exception {
    certs = DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    otherCa = dir.resolve("other-ca.pem");
    DevCertificates.Authority.create("Other CA", DevCertificates.KeyType.RSA, Duration.ofDays(1))
        .writePem(otherCa, dir.resolve("other-ca.key"));
    serverTls =
        ServerTls.load(certs.serverCert(), certs.serverKey(), certs.caCert(), Duration.ZERO);
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .sslContext(serverTls.sslContext())
            .addService(new HealthStatusManager().getHealthService())
            .build()
            .start();
    tls = new BackendTls();
  }

  @AfterEach
  void stop() throws Exception {
    tls.close();
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    serverTls.close();
  }

  private SslContext context(Path ca, boolean clientCertificate) {
    return tls.context(
        "backend test",
        ca,
        clientCertificate ? certs.clientCert() : null,
        clientCertificate ? certs.clientKey() : null,
        RELOAD);
  }

  private static HealthCheckResponse.ServingStatus check(
      int port, SslContext context, String serverName, Duration handshakeTimeout) {
    ManagedChannel channel =
        BackendTransport.tls(
                NettyChannelBuilder.forAddress("127.0.0.1", port),
                context,
                serverName,
                port,
                Duration.ofSeconds(5),
                handshakeTimeout)
            .build();
    try {
      return HealthGrpc.newBlockingStub(channel)
          .withDeadlineAfter(20, TimeUnit.SECONDS)
          .check(HealthCheckRequest.getDefaultInstance())
          .getStatus();
    } finally {
      channel.shutdownNow();
    }
  }

  private HealthCheckResponse.ServingStatus check(SslContext context, String serverName) {
    return check(server.getPort(), context, serverName, Duration.ofSeconds(10));
  }

  private Status refused(SslContext context, String serverName) {
    return assertThrows(StatusRuntimeException.class, () -> check(context, serverName)).getStatus();
  }

  @Test
  void verifiedServer_withClientCertificate_answers() {
    SslContext context = context(certs.caCert(), true);
    assertEquals(HealthCheckResponse.ServingStatus.SERVING, check(context, "127.0.0.1"));
    assertEquals(HealthCheckResponse.ServingStatus.SERVING, check(context, "localhost"));
  }

  @Test
  void sameFiles_shareOneContext() {
    assertTrue(context(certs.caCert(), true) == context(certs.caCert(), true));
  }

  @Test
  void certificateFromAnotherCa_isRefused() {
    Status status = refused(context(otherCa, true), "127.0.0.1");
    assertEquals(Status.Code.UNAVAILABLE, status.getCode(), status.toString());
  }

  @Test
  void certificateForAnotherName_isRefused() {
    Status status = refused(context(certs.caCert(), true), "spark.example.com");
    assertEquals(Status.Code.UNAVAILABLE, status.getCode(), status.toString());
  }

  @Test
  void noClientCertificate_isRefusedByAServerThatRequiresOne() {
    Status status = refused(context(certs.caCert(), false), "127.0.0.1");
    assertEquals(Status.Code.UNAVAILABLE, status.getCode(), status.toString());
  }

  @Test
  void noCaFile_meansTheJvmsDefaultTrust_whichDoesNotKnowAPrivateCa() {
    Status status = refused(context(null, true), "127.0.0.1");
    assertEquals(Status.Code.UNAVAILABLE, status.getCode(), status.toString());
  }

  @Test
  void renewedCaFile_reachesNewConnections() throws Exception {
    Path ca = dir.resolve("backend-ca.pem");
    Files.copy(otherCa, ca);
    SslContext context = context(ca, true);
    refused(context, "127.0.0.1");

    Path next = dir.resolve("backend-ca.pem.new");
    Files.copy(certs.caCert(), next);
    Files.move(next, ca, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (true) {
      try {
        assertEquals(HealthCheckResponse.ServingStatus.SERVING, check(context, "127.0.0.1"));
        return;
      } catch (StatusRuntimeException e) {
        if (System.nanoTime() > deadline) throw e;
        Thread.sleep(RELOAD.toMillis());
      }
    }
  }

  @Test
  void serverThatCompletesTlsButNeverAnswers_failsAtTheHandshakeTimeout() throws Exception {
    // TLS only: the handshake (ALPN h2) completes, then nothing: no HTTP/2 SETTINGS ever.
    ServerTls silentTls =
        ServerTls.load(certs.serverCert(), certs.serverKey(), null, Duration.ZERO);
    MultiThreadIoEventLoopGroup group =
        new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    try {
      Channel silent =
          new ServerBootstrap()
              .group(group)
              .channel(NioServerSocketChannel.class)
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      ch.pipeline().addLast(silentTls.sslContext().newHandler(ch.alloc()));
                    }
                  })
              .bind("127.0.0.1", 0)
              .sync()
              .channel();
      int port = ((InetSocketAddress) silent.localAddress()).getPort();
      long started = System.nanoTime();
      Status status =
          assertThrows(
                  StatusRuntimeException.class,
                  () ->
                      check(
                          port,
                          context(certs.caCert(), false),
                          "127.0.0.1",
                          Duration.ofMillis(500)))
              .getStatus();
      Duration took = Duration.ofNanos(System.nanoTime() - started);
      assertEquals(Status.Code.UNAVAILABLE, status.getCode(), status.toString());
      assertTrue(
          String.valueOf(status.getDescription()).contains("handshake_timeout"), status.toString());
      assertTrue(took.compareTo(Duration.ofSeconds(10)) < 0, "took " + took);
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
      silentTls.close();
    }
  }
}
