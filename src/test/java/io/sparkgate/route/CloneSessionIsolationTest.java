package io.sparkgate.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.sparkgate.Sparkgate;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.CloneSessionRequest;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.GetStatusRequest;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CloneSession (4.1) and GetStatus (4.2) through an authenticating proxy: the user_context reaching the
 * server is the caller's, whatever it declared, so a user naming another user's session clones (or asks
 * about) only a session of its own; the clone is registered beside its source under the caller.
 */
final class CloneSessionIsolationTest {
  private static final String ALICE_SESSION = "00000000-0000-4000-8000-00000000a11c";
  private static final String CLONE = "00000000-0000-4000-8000-0000000c1011";

  @TempDir Path dir;
  private final FakeSparkConnect fakeA = new FakeSparkConnect();
  private final FakeSparkConnect fakeB = new FakeSparkConnect();
  private Server serverA;
  private Server serverB;
  private Sparkgate proxy;
  private ManagedChannel channel;

  private static String sha256(String s) throws Exception {
    return HexFormat.of()
        .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
  }

  @BeforeEach
  void start() throws Exception {
    // An empty message parses as any response (the proxy reads Config responses).
    fakeA.reply = m -> new byte[0];
    fakeB.reply = m -> new byte[0];
    serverA = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(fakeA).build().start();
    serverB = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(fakeB).build().start();
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(
        file,
        String.join(
            "\n",
            "listen: {plaintext: true, address: 127.0.0.1, port: 0}",
            "pools:",
            "  main:",
            "    backends: ['127.0.0.1:"
                + serverA.getPort()
                + "', '127.0.0.1:"
                + serverB.getPort()
                + "']",
            "auth:",
            "  static_tokens:",
            "    - {sha256: " + sha256("alice-secret-token") + ", principal: alice}",
            "    - {sha256: " + sha256("bob-secret-token") + ", principal: bob}",
            ""));
    proxy = Sparkgate.start(ProxyConfig.load(file));
    channel = Channels.plaintext(proxy.port()).build();
  }

  @AfterEach
  void stop() {
    channel.shutdownNow();
    proxy.close();
    serverA.shutdownNow();
    serverB.shutdownNow();
  }

  private Channel as(String token) {
    Metadata md = new Metadata();
    md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md));
  }

  private static UserContext declared(String user) {
    return UserContext.newBuilder().setUserId(user).setUserName(user).build();
  }

  /**
   * Sends one unary call; returns the backend that got it and what it got (the proxy's own profiling calls,
   * which carry no session of ours, are passed over).
   */
  private Received send(Channel ch, String method, byte[] request, String session)
      throws Exception {
    fakeA.received.clear();
    fakeB.received.clear();
    ClientCalls.blockingUnaryCall(
        ch,
        TestMethods.get(method),
        CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
        request);
    java.util.List<Received> ours = new java.util.ArrayList<>();
    for (FakeSparkConnect fake : java.util.List.of(fakeA, fakeB)) {
      for (byte[] m; (m = fake.received.poll()) != null; ) {
        if (new String(m, StandardCharsets.ISO_8859_1).contains(session))
          ours.add(new Received(fake, m));
      }
    }
    assertEquals(1, ours.size(), "exactly one backend got the call");
    return ours.get(0);
  }

  private record Received(FakeSparkConnect backend, byte[] bytes) {}

  @Test
  void bobNamingAlicesSession_clonesOnlyHisOwn_andTheCloneIsPlacedUnderBob() throws Exception {
    byte[] aliceConfig =
        ConfigRequest.newBuilder()
            .setSessionId(ALICE_SESSION)
            .setUserContext(declared("alice"))
            .setOperation(
                ConfigRequest.Operation.newBuilder()
                    .setGet(ConfigRequest.Get.newBuilder().addKeys("spark.sql.shuffle.partitions")))
            .build()
            .toByteArray();
    send(as("alice-secret-token"), "Config", aliceConfig, ALICE_SESSION);

    Received clone =
        send(
            as("bob-secret-token"),
            "CloneSession",
            CloneSessionRequest.newBuilder()
                .setSessionId(ALICE_SESSION)
                .setNewSessionId(CLONE)
                .setUserContext(declared("alice"))
                .build()
                .toByteArray(),
            CLONE);
    CloneSessionRequest atServer = CloneSessionRequest.parseFrom(clone.bytes());
    // The server looks the source up by (bob, session): alice's session is not bob's to clone.
    assertEquals("bob", atServer.getUserContext().getUserId());
    assertEquals("bob", atServer.getUserContext().getUserName());
    assertEquals(ALICE_SESSION, atServer.getSessionId());
    assertEquals(CLONE, atServer.getNewSessionId());

    // The clone is bob's session, on the backend the clone went to.
    for (int i = 0; i < 5; i++) {
      Received status =
          send(
              as("bob-secret-token"),
              "GetStatus",
              GetStatusRequest.newBuilder()
                  .setSessionId(CLONE)
                  .setUserContext(declared("alice"))
                  .setOperationStatus(GetStatusRequest.OperationStatusRequest.getDefaultInstance())
                  .build()
                  .toByteArray(),
              CLONE);
      assertEquals(clone.backend(), status.backend());
      assertEquals("bob", GetStatusRequest.parseFrom(status.bytes()).getUserContext().getUserId());
    }
    assertNotEquals(
        "alice", CloneSessionRequest.parseFrom(clone.bytes()).getUserContext().getUserId());
  }
}
