package io.sparkgate.quota;

import static io.sparkgate.testing.WireBytes.concat;
import static io.sparkgate.testing.WireBytes.field;
import static io.sparkgate.testing.WireBytes.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.rpc.RetryInfo;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.sparkgate.Sparkgate;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import io.sparkgate.testing.RedisServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Quotas across two running proxy replicas sharing a real Redis: a principal's concurrent operations are
 * counted over both replicas, another principal is unaffected, and the operations a replica held are given
 * back once it is gone (at the latest when their lease runs out).
 */
final class SharedQuotasIT {
  private static final String ALICE = "alice-token-0123456789";
  private static final String BOB = "bob-token-0123456789";

  @TempDir Path dir;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private boolean closed;

  /** A running ExecutePlan: its first response, or how it ended (status and trailers). */
  private record Running(ClientCall<byte[], byte[]> call, CompletableFuture<Object> first) {}

  private record Ended(Status status, Metadata trailers) {}

  @Test
  void concurrentOperationsAreCountedAcrossReplicas_andAGoneReplicasAreGivenBack()
      throws Exception {
    FakeSparkConnect backend = new FakeSparkConnect();
    backend.streamCount = Integer.MAX_VALUE; // results never end: each call holds its slot
    Server server = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(backend).build().start();
    try (RedisServer redis = RedisServer.start(dir.resolve("redis"))) {
      Path file = dir.resolve("sparkgate.yaml");
      Files.writeString(
          file,
          String.join(
              "\n",
              "listen: {plaintext: true, address: 127.0.0.1, port: 0, shutdown_grace: 0s}",
              "backend: {address: '127.0.0.1:" + server.getPort() + "'}",
              "auth:",
              "  static_tokens:",
              "    - {sha256: " + sha256(ALICE) + ", principal: alice}",
              "    - {sha256: " + sha256(BOB) + ", principal: bob}",
              "sessions: {store: redis, redis_url: '" + redis.url() + "'}",
              "quotas:",
              "  per_principal: {concurrent_operations: 2}",
              "  operation_lease: 5s",
              ""));
      Sparkgate one = Sparkgate.start(ProxyConfig.load(file));
      try (Sparkgate two = Sparkgate.start(ProxyConfig.load(file))) {
        assertTrue(started(execute(one, ALICE)), "alice's first, through replica one");
        assertTrue(started(execute(two, ALICE)), "alice's second, through replica two");

        Ended third = (Ended) execute(one, ALICE).first().get(20, TimeUnit.SECONDS);
        Status refused = third.status();
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getCode(), refused.toString());
        assertTrue(refused.getDescription().contains("SPARKGATE_QUOTA_EXCEEDED"));
        assertTrue(refused.getDescription().contains("concurrent_operations"));
        assertTrue(
            StatusProto.fromStatusAndTrailers(refused, third.trailers()).getDetailsList().stream()
                .anyMatch(d -> d.is(RetryInfo.class)),
            "with RetryInfo: the client may retry once an operation ends");
        Ended fourth = (Ended) execute(two, ALICE).first().get(20, TimeUnit.SECONDS);
        assertEquals(
            Status.Code.RESOURCE_EXHAUSTED, fourth.status().getCode(), "through either replica");

        assertTrue(started(execute(two, BOB)), "bob is not affected by alice's quota");
        assertTrue(started(execute(one, BOB)), "nor through the other replica");

        // Replica one goes away with alice's first operation open: its slot comes back.
        one.close();
        closed = true;
        long gone = System.nanoTime();
        Await.until(
            "alice's slot held on the stopped replica is given back",
            Duration.ofSeconds(30),
            () -> {
              Running next = execute(two, ALICE);
              Object first = next.first().get(20, TimeUnit.SECONDS);
              return first instanceof byte[];
            });
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - gone);
        assertTrue(seconds <= 5 + 10, "within the lease and a sync: " + seconds + " s");
      } finally {
        if (!closed) one.close();
      }
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
      server.shutdownNow();
    }
  }

  private static boolean started(Running running) throws Exception {
    return running.first().get(20, TimeUnit.SECONDS) instanceof byte[];
  }

  /** Starts an ExecutePlan of a new operation in its own session; the future completes at its first event. */
  private Running execute(Sparkgate via, String token) {
    ManagedChannel channel = Channels.plaintext(via.port()).build();
    channels.add(channel);
    ClientCall<byte[], byte[]> call =
        ClientInterceptors.intercept(channel, Channels.bearer(token))
            .newCall(TestMethods.get("ExecutePlan"), CallOptions.DEFAULT);
    CompletableFuture<Object> first = new CompletableFuture<>();
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(byte[] message) {
            first.complete(message);
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            first.complete(new Ended(status, trailers));
          }
        },
        new Metadata());
    call.sendMessage(
        concat(
            field(1, utf8(UUID.randomUUID().toString())),
            field(2, field(1, utf8("someone"))),
            field(6, utf8(UUID.randomUUID().toString()))));
    call.halfClose();
    call.request(1);
    return new Running(call, first);
  }

  private static String sha256(String token) throws Exception {
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
  }
}
