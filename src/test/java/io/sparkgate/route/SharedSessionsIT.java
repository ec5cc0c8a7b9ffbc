package io.sparkgate.route;

import static io.sparkgate.testing.WireBytes.concat;
import static io.sparkgate.testing.WireBytes.field;
import static io.sparkgate.testing.WireBytes.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.rpc.RetryInfo;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.sparkgate.Sparkgate;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import io.sparkgate.testing.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two proxy replicas sharing placements through a real Redis, in front of two backends: whichever replica
 * a request of a session arrives at, it reaches the backend that session was placed on; with Redis gone, a
 * session a replica has cached carries on and one it has not seen is refused retryably, never misrouted.
 */
final class SharedSessionsIT {
  @TempDir Path dir;

  private static byte[] request(String user, String session) {
    return concat(field(1, utf8(session)), field(2, field(1, utf8(user))));
  }

  @Test
  void replicasAgreeOnEverySession_andRedisGoingAwayNeverMisroutes() throws Exception {
    FakeSparkConnect a = new FakeSparkConnect();
    FakeSparkConnect b = new FakeSparkConnect();
    Server serverA = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(a).build().start();
    Server serverB = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(b).build().start();
    try (RedisServer redis = RedisServer.start(dir.resolve("redis"))) {
      Path file = dir.resolve("sparkgate.yaml");
      Files.writeString(
          file,
          String.join(
              "\n",
              "listen: {plaintext: true, address: 127.0.0.1, port: 0}",
              "pools:",
              "  analytics:",
              "    backends: ['127.0.0.1:"
                  + serverA.getPort()
                  + "', '127.0.0.1:"
                  + serverB.getPort()
                  + "']",
              "sessions: {store: redis, redis_url: '" + redis.url() + "', redis_timeout: 300ms}",
              "auth: {anonymous: true}",
              ""));
      try (Sparkgate one = Sparkgate.start(ProxyConfig.load(file));
          Sparkgate two = Sparkgate.start(ProxyConfig.load(file))) {
        ManagedChannel c1 = Channels.plaintext(one.port()).build();
        ManagedChannel c2 = Channels.plaintext(two.port()).build();
        try {
          // Each session placed through one replica (alternating), then used through both.
          int onA = 0;
          for (int i = 0; i < 40; i++) {
            String session = "shared-" + i;
            FakeSparkConnect first = send(i % 2 == 0 ? c1 : c2, a, b, "dana", session);
            if (first == a) onA++;
            for (int j = 0; j < 4; j++) {
              assertEquals(first, send(j % 2 == 0 ? c2 : c1, a, b, "dana", session), session);
            }
          }
          assertTrue(
              onA > 5 && onA < 35, "sessions spread over both backends: " + onA + " of 40 on A");

          // A session only replica one has seen; then Redis goes away.
          FakeSparkConnect home = send(c1, a, b, "erin", "cached-on-one");
          redis.stop();
          // Readiness says so: a replica without its registry should not get new clients.
          Await.until(
              "replica one not ready without Redis",
              Duration.ofSeconds(10),
              () -> !one.readiness().ready() && one.readiness().failing().contains("sessions"));
          for (int i = 0; i < 5; i++) {
            assertEquals(home, send(c1, a, b, "erin", "cached-on-one"), "cached: carries on");
          }
          int before = a.calls.get() + b.calls.get();
          StatusRuntimeException e =
              assertThrows(
                  StatusRuntimeException.class, () -> send(c2, a, b, "erin", "cached-on-one"));
          assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
          assertTrue(
              e.getStatus().getDescription().contains("SPARKGATE_SESSION_REGISTRY_UNAVAILABLE"));
          assertTrue(
              StatusProto.fromThrowable(e).getDetailsList().stream()
                  .anyMatch(d -> d.is(RetryInfo.class)));
          assertEquals(before, a.calls.get() + b.calls.get(), "nothing reached any backend");

          // Redis back (empty: no persistence): both replicas recover without a restart, each on
          // its own reconnect schedule, so wait for each before asking them to agree.
          redis.start();
          awaitAnswers("replica one", c1, a, b);
          awaitAnswers("replica two", c2, a, b);
          Await.until(
              "both replicas ready again",
              Duration.ofSeconds(10),
              () -> one.readiness().ready() && two.readiness().ready());
          FakeSparkConnect after = send(c2, a, b, "erin", "after-outage");
          assertEquals(after, send(c1, a, b, "erin", "after-outage"));
        } finally {
          c1.shutdownNow();
          c2.shutdownNow();
        }
      }
    } finally {
      serverA.shutdownNow();
      serverB.shutdownNow();
    }
  }

  private static void awaitAnswers(
      String replica, ManagedChannel via, FakeSparkConnect a, FakeSparkConnect b) throws Exception {
    Await.until(
        replica + " answers again",
        Duration.ofSeconds(20),
        () -> {
          try {
            send(via, a, b, "erin", "probe-" + replica);
            return true;
          } catch (StatusRuntimeException x) {
            return false;
          }
        });
  }

  /** Sends a Config call; returns the backend that got it. */
  private static FakeSparkConnect send(
      ManagedChannel via, FakeSparkConnect a, FakeSparkConnect b, String user, String session) {
    int ca = a.calls.get();
    int cb = b.calls.get();
    ClientCalls.blockingUnaryCall(
        via,
        TestMethods.get("Config"),
        CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
        request(user, session));
    boolean toA = a.calls.get() > ca;
    boolean toB = b.calls.get() > cb;
    assertTrue(toA ^ toB, "exactly one backend got the call");
    return toA ? a : b;
  }
}
