package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.ArtifactStatusesRequest;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import io.sparkgate.tls.DevCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutual TLS as an identity, over real TLS: the principal is the verified client certificate's CN, stamped on
 * the request the backend receives whatever user_id the client declared.
 */
final class ClientCertAuthTest {
  @TempDir Path dir;

  @Test
  void clientCertificate_becomesThePrincipal_declaredUserIdOverwritten() throws Exception {
    DevCertificates.Generated certs =
        DevCertificates.generate(
            dir.resolve("certs"), DevCertificates.Options.defaults().withClientName("carol"));
    FakeSparkConnect backend = new FakeSparkConnect();
    backend.reply = m -> new byte[0];
    Server backendServer = backend.serve();
    Files.writeString(
        dir.resolve("sparkgate.yaml"),
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0}",
            "tls: {cert_file: certs/server.pem, key_file: certs/server.key, client_ca_file: certs/ca.pem}",
            "backend: {address: '127.0.0.1:" + backendServer.getPort() + "'}",
            "auth: {client_cert: {principal_from: cn}}",
            ""));
    try (Sparkgate proxy = Sparkgate.start(ProxyConfig.load(dir.resolve("sparkgate.yaml")))) {
      ManagedChannel withCert =
          Channels.tls(proxy.port(), certs.caCert(), certs.clientCert(), certs.clientKey()).build();
      ManagedChannel withoutCert = Channels.tls(proxy.port(), certs.caCert()).build();
      try {
        byte[] request =
            ArtifactStatusesRequest.newBuilder()
                .setSessionId("4a3c1f6e-0000-4000-8000-000000000001")
                .setUserContext(
                    UserContext.newBuilder().setUserId("mallory").setUserName("mallory"))
                .build()
                .toByteArray();
        ClientCalls.blockingUnaryCall(
            withCert, TestMethods.get("ArtifactStatus"), CallOptions.DEFAULT, request);

        ArtifactStatusesRequest seen = ArtifactStatusesRequest.parseFrom(backend.received.take());
        assertEquals("carol", seen.getUserContext().getUserId());
        assertEquals("carol", seen.getUserContext().getUserName());

        StatusRuntimeException e =
            assertThrows(
                StatusRuntimeException.class,
                () ->
                    ClientCalls.blockingUnaryCall(
                        withoutCert,
                        TestMethods.get("ArtifactStatus"),
                        CallOptions.DEFAULT,
                        request));
        assertEquals(
            Status.Code.UNAVAILABLE,
            e.getStatus().getCode(),
            "no client certificate: handshake refused");
      } finally {
        withCert.shutdownNow();
        withoutCert.shutdownNow();
        backendServer.shutdownNow();
      }
    }
  }
}
