package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.ArtifactStatusesRequest;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a client asserts in headers never reaches the Spark server unless the operator lists it: through a
 * real proxy on real sockets, a backend that records the headers it received.
 */
final class HeaderHygieneTest {
  @TempDir Path dir;

  private static Metadata.Key<String> ascii(String name) {
    return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
  }

  private static Metadata.Key<byte[]> binary(String name) {
    return Metadata.Key.of(name, Metadata.BINARY_BYTE_MARSHALLER);
  }

  @Test
  void forgedIdentityAddressAndTracing_stripped_xForwardedForIsThePeer_listedKept()
      throws Exception {
    FakeSparkConnect backend = new FakeSparkConnect();
    Server backendServer = backend.serve();
    Files.writeString(
        dir.resolve("sparkgate.yaml"),
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0, plaintext: true,"
                + " forward_headers: [x-spark-team, x-request-id]}",
            "backend: {address: '127.0.0.1:" + backendServer.getPort() + "'}",
            "auth: {anonymous: true}",
            ""));
    try (Sparkgate proxy = Sparkgate.start(ProxyConfig.load(dir.resolve("sparkgate.yaml")))) {
      ManagedChannel channel = Channels.plaintext(proxy.port()).build();
      try {
        Metadata forged = new Metadata();
        for (String name :
            List.of(
                "x-forwarded-for",
                "x-forwarded-user",
                "forwarded",
                "x-real-ip",
                "x-user",
                "spark-user",
                "x-remote-user",
                "x-unlisted")) {
          forged.put(ascii(name), name.equals("forwarded") ? "for=203.0.113.9" : "203.0.113.9");
        }
        forged.put(binary("grpc-trace-bin"), new byte[] {0, 1, 2});
        forged.put(binary("grpc-tags-bin"), new byte[] {3});
        forged.put(ascii("x-spark-team"), "analytics");
        forged.put(ascii("x-request-id"), "r-1");
        byte[] request =
            ArtifactStatusesRequest.newBuilder()
                .setSessionId("4a3c1f6e-0000-4000-8000-000000000049")
                .setUserContext(UserContext.newBuilder().setUserId("mallory"))
                .build()
                .toByteArray();
        ClientCalls.blockingUnaryCall(
            ClientInterceptors.intercept(
                channel, MetadataUtils.newAttachHeadersInterceptor(forged)),
            TestMethods.get("ArtifactStatus"),
            CallOptions.DEFAULT,
            request);

        Metadata seen = backend.lastHeaders.get();
        for (String name :
            List.of(
                "x-forwarded-user",
                "forwarded",
                "x-real-ip",
                "x-user",
                "spark-user",
                "x-remote-user",
                "x-unlisted",
                "authorization")) {
          assertNull(seen.get(ascii(name)), name);
        }
        assertNull(seen.get(binary("grpc-trace-bin")));
        assertNull(seen.get(binary("grpc-tags-bin")));
        // One value, the proxy's: the client's own connection came from loopback, not 203.0.113.9.
        assertEquals(
            List.of("127.0.0.1"),
            StreamSupport.stream(seen.getAll(ascii("x-forwarded-for")).spliterator(), false)
                .toList());
        assertEquals("analytics", seen.get(ascii("x-spark-team")));
        assertEquals("r-1", seen.get(ascii("x-request-id")));
      } finally {
        channel.shutdownNow();
      }
    } finally {
      backendServer.shutdownNow();
    }
  }
}
