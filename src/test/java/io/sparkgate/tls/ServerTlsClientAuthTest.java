package io.sparkgate.tls;

import static io.sparkgate.tls.TlsTestSupport.channel;
import static io.sparkgate.tls.TlsTestSupport.check;
import static io.sparkgate.tls.TlsTestSupport.clientContext;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import io.sparkgate.tls.DevCertificates.KeyType;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * mTLS: with tls.client_ca_file set, only clients whose certificate chains to that CA get through.
 * Note for TLS 1.3: the client finishes its handshake before the server has judged its certificate,
 * so the refusal arrives as an alert right after; gRPC reports it as UNAVAILABLE on the first call.
 */
final class ServerTlsClientAuthTest {
  @TempDir Path dir;
  private ServerTls tls;
  private Server server;
  private ManagedChannel channel;
  private DevCertificates.Generated certs;

  static Stream<Arguments> providersAndProtocols() {
    return Stream.of(SslProvider.OPENSSL, SslProvider.JDK)
        .flatMap(p -> Stream.of("TLSv1.3", "TLSv1.2").map(v -> Arguments.of(p, v)));
  }

  private void start(SslProvider provider) throws Exception {
    certs = DevCertificates.generate(dir, DevCertificates.Options.defaults());
    tls = ServerTls.load(certs.serverCert(), certs.serverKey(), certs.caCert(), null, provider);
    server = TlsTestSupport.startServer(tls);
  }

  @AfterEach
  void tearDown() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    TlsTestSupport.stop(server);
    if (tls != null) {
      tls.close();
    }
  }

  private void assertRefused() {
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> check(channel));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e::toString);
  }

  @ParameterizedTest
  @MethodSource("providersAndProtocols")
  void mtls_without_client_certificate_refused(SslProvider provider, String protocol)
      throws Exception {
    start(provider);
    channel = channel(server, clientContext(certs.caCert(), protocol));
    assertRefused();
  }

  @ParameterizedTest
  @MethodSource("providersAndProtocols")
  void mtls_client_certificate_from_other_ca_refused(SslProvider provider, String protocol)
      throws Exception {
    start(provider);
    DevCertificates.Authority other =
        DevCertificates.Authority.create("Unrelated CA", KeyType.RSA, Duration.ofDays(1));
    // Same CN as the legitimate client: only the issuer differs.
    other
        .issueClient("dev-user", null, KeyType.RSA, Duration.ofDays(1))
        .writePem(dir.resolve("other.pem"), dir.resolve("other.key"));
    channel =
        channel(
            server,
            clientContext(
                certs.caCert(),
                protocol,
                dir.resolve("other.pem"),
                dir.resolve("other.key"),
                SslProvider.OPENSSL));
    assertRefused();
  }

  @ParameterizedTest
  @MethodSource("providersAndProtocols")
  void mtls_client_certificate_from_configured_ca_accepted(SslProvider provider, String protocol)
      throws Exception {
    start(provider);
    channel =
        channel(
            server,
            clientContext(
                certs.caCert(),
                protocol,
                certs.clientCert(),
                certs.clientKey(),
                SslProvider.OPENSSL));
    TlsTestSupport.CallResult r = check(channel);
    assertEquals(ServingStatus.SERVING, r.status());
    assertEquals(protocol, r.protocol());
  }
}
