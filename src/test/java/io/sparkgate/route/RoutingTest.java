package io.sparkgate.route;

import static io.sparkgate.testing.WireBytes.concat;
import static io.sparkgate.testing.WireBytes.field;
import static io.sparkgate.testing.WireBytes.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.rpc.RetryInfo;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Routing through a real proxy to two fake backends: a session stays on the backend it was placed on, new
 * sessions spread over the pool, a clone lands beside its source, and a backend that goes down keeps its
 * sessions (refused, retryably, then for good) while new sessions go to the other.
 */
final class RoutingTest {
  @TempDir Path dir;
  private final FakeSparkConnect fakeA = new FakeSparkConnect();
  private final FakeSparkConnect fakeB = new FakeSparkConnect();
  private Server serverA;
  private Server serverB;
  private Sparkgate proxy;
  private ManagedChannel client;

  @BeforeEach
  void start() throws Exception {
    serverA = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(fakeA).build().start();
    serverB = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(fakeB).build().start();
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
            "  other:",
            "    backends: ['127.0.0.1:1']",
            "routes:",
            "  - {match: {authority: ['other.*']}, pool: other}",
            "  - {match: {authority: ['127.0.0.1', 'localhost']}, pool: analytics}",
            "health: {interval: 200ms, timeout: 500ms, session_lost_after: 2s}",
            "quotas: {per_principal: {max_plan_bytes: 4KiB}}",
            "auth: {anonymous: true}",
            ""));
    proxy = Sparkgate.start(ProxyConfig.load(file));
    client = Channels.plaintext(proxy.port()).build();
  }

  @AfterEach
  void stop() {
    client.shutdownNow();
    proxy.close();
    serverA.shutdownNow();
    if (serverB != null) serverB.shutdownNow();
  }

  private static byte[] request(String user, String session) {
    return concat(field(1, utf8(session)), field(2, field(1, utf8(user))));
  }

  /** Sends a Config call of this session; returns the fake backend that got it. */
  private FakeSparkConnect send(String user, String session) {
    int a = fakeA.calls.get();
    int b = fakeB.calls.get();
    ClientCalls.blockingUnaryCall(
        client,
        TestMethods.get("Config"),
        io.grpc.CallOptions.DEFAULT.withDeadlineAfter(5, java.util.concurrent.TimeUnit.SECONDS),
        request(user, session));
    boolean toA = fakeA.calls.get() > a;
    boolean toB = fakeB.calls.get() > b;
    assertTrue(toA ^ toB, "exactly one backend got the call");
    return toA ? fakeA : fakeB;
  }

  @Test
  void aSessionStaysWhereItWasPlaced_andSessionsSpread() {
    Map<FakeSparkConnect, Integer> spread = new HashMap<>();
    for (int i = 0; i < 30; i++) {
      String session = "00000000-0000-0000-0000-0000000000" + (10 + i);
      FakeSparkConnect first = send("alice", session);
      spread.merge(first, 1, Integer::sum);
      for (int j = 0; j < 3; j++) {
        assertEquals(
            first, send("alice", session), "every request of the session goes to one backend");
      }
    }
    assertEquals(2, spread.size(), "both backends got sessions: " + spread);
  }

  @Test
  void quotasApplyThroughTheProxy() {
    byte[] large = concat(request("alice", "big"), field(5, new byte[8192]));
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                ClientCalls.blockingUnaryCall(
                    client, TestMethods.get("Config"), io.grpc.CallOptions.DEFAULT, large));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
    assertTrue(e.getStatus().getDescription().contains("SPARKGATE_QUOTA_EXCEEDED"));
    assertEquals(0, fakeA.calls.get() + fakeB.calls.get(), "refused before any backend");
  }

  @Test
  void aCloneIsPlacedBesideItsSource() {
    for (int i = 0; i < 10; i++) {
      String source = "source-" + i;
      FakeSparkConnect home = send("alice", source);
      ClientCalls.blockingUnaryCall(
          client,
          TestMethods.get("CloneSession"),
          io.grpc.CallOptions.DEFAULT,
          concat(request("alice", source), field(4, utf8("clone-" + i))));
      assertEquals(home, send("alice", "clone-" + i));
    }
  }

  @Test
  void aBackendDown_keepsItsSessions_refusedThenLost_whileNewSessionsGoToTheOther()
      throws Exception {
    String onB = null;
    for (int i = 0; onB == null; i++) {
      if (send("bob", "s-" + i) == fakeB) onB = "s-" + i;
    }
    serverB.shutdownNow();
    serverB.awaitTermination();
    serverB = null;
    String session = onB;
    StatusRuntimeException retry =
        Await.value(
            "the session on the stopped backend is refused",
            Duration.ofSeconds(10),
            () -> assertThrows(StatusRuntimeException.class, () -> send("bob", session)),
            e -> e.getStatus().getDescription().contains("SPARKGATE_BACKEND_UNAVAILABLE"));
    assertEquals(Status.Code.UNAVAILABLE, retry.getStatus().getCode());
    assertTrue(
        StatusProto.fromThrowable(retry).getDetailsList().stream()
            .anyMatch(d -> d.is(RetryInfo.class)),
        "with RetryInfo: the client retries while the server may come back");
    for (int i = 0; i < 20; i++) {
      assertEquals(fakeA, send("bob", "new-" + i), "new sessions go to the backend that is up");
    }
    StatusRuntimeException lost =
        Await.value(
            "after session_lost_after the session is lost for good",
            Duration.ofSeconds(10),
            () -> assertThrows(StatusRuntimeException.class, () -> send("bob", session)),
            e -> e.getStatus().getCode() == Status.Code.FAILED_PRECONDITION);
    assertTrue(lost.getStatus().getDescription().contains("SPARKGATE_SESSION_LOST"));
    assertTrue(lost.getStatus().getDescription().contains("Start a new session"));
    assertFalse(
        StatusProto.fromThrowable(lost).getDetailsList().stream()
            .anyMatch(d -> d.is(RetryInfo.class)));
  }

  @Test
  void changedRoutes_takeEffectWithoutARestart_andPlacedSessionsStay() throws Exception {
    FakeSparkConnect home = send("carol", "kept");
    Path file = dir.resolve("sparkgate.yaml");
    // Everyone from 127.0.0.1 now goes to pool "other" (a server that is not there).
    Files.writeString(
        file,
        Files.readString(file)
            .replace("{match: {authority: ['other.*']}, pool: other}", "{pool: other}")
            .replace(
                "  - {match: {authority: ['127.0.0.1', 'localhost']}, pool: analytics}\n", ""));
    int[] attempt = {0};
    Status refused =
        Await.value(
            "a new session follows the new route",
            Duration.ofSeconds(20),
            () -> {
              try {
                send("carol", "new-" + attempt[0]++);
                return Status.OK;
              } catch (StatusRuntimeException x) {
                return x.getStatus();
              }
            },
            x -> x.getCode() == Status.Code.UNAVAILABLE);
    assertTrue(refused.getDescription().contains("SPARKGATE_"), refused.toString());
    assertEquals(home, send("carol", "kept"), "the placed session stays on its backend");
  }

  @Test
  void aPrincipalNoRouteTakes_isRefused_namingNoPool() throws Exception {
    ManagedChannel other =
        Channels.plaintext(proxy.port()).overrideAuthority("elsewhere.example").build();
    try {
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () ->
                  ClientCalls.blockingUnaryCall(
                      other,
                      TestMethods.get("Config"),
                      io.grpc.CallOptions.DEFAULT,
                      request("alice", "s")));
      assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
      assertTrue(e.getStatus().getDescription().contains("SPARKGATE_NO_ROUTE"));
      assertFalse(e.getStatus().getDescription().contains("analytics"));
      assertFalse(e.getStatus().getDescription().contains("other"));
      assertEquals(0, fakeA.calls.get() + fakeB.calls.get());
    } finally {
      other.shutdownNow();
    }
  }
}
