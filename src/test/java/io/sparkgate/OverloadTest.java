package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.util.concurrent.ListenableFuture;
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
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Twice the calls the proxy may serve at once, against a backend that holds every call it gets until the test
 * lets it answer: the calls beyond {@code limits.max_calls} are refused while the backend still holds the
 * others (so before any backend answer), with RESOURCE_EXHAUSTED, Spark's error shape and a RetryInfo; the
 * accepted ones then complete with the backend's answer, and round after round the proxy's heap stays flat.
 */
final class OverloadTest {
  private static final MethodDescriptor<byte[], byte[]> UNARY = TestMethods.get("ArtifactStatus");
  private static final int MAX_CALLS = 8;
  private static final String REFUSALS = "sparkgate_overload_refusals_total{limit=max_calls}";

  @TempDir Path dir;
  private final FakeSparkConnect backend = new FakeSparkConnect();
  private final AtomicInteger held = new AtomicInteger();
  private volatile CountDownLatch answer = new CountDownLatch(0);
  private Server backendServer;
  private Sparkgate proxy;
  private ManagedChannel client;

  @BeforeEach
  void start() throws Exception {
    backend.reply =
        m -> {
          held.incrementAndGet();
          try {
            answer.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return "ok".getBytes(StandardCharsets.UTF_8);
        };
    backendServer = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(backend).build().start();
    Path config = dir.resolve("overload.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0, plaintext: true}",
            "backend: {address: '127.0.0.1:" + backendServer.getPort() + "'}",
            "auth:",
            "  anonymous: true",
            "limits:",
            "  max_calls: " + MAX_CALLS,
            "admin: {address: 127.0.0.1, port: 0}",
            ""));
    proxy = Sparkgate.start(ProxyConfig.load(config));
    client = Channels.plaintext(proxy.port()).build();
  }

  @AfterEach
  void stop() throws Exception {
    answer.countDown();
    client.shutdownNow();
    proxy.close();
    backendServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void twiceTheLimit_excessRefusedBeforeAnyAnswerWithRetryInfo_acceptedComplete_heapFlat()
      throws Exception {
    round(); // warm up: classes, buffers, the backend connections
    long heapBefore = heapAfterGc();
    double countedBefore = refusalsCounted();
    for (int r = 0; r < 4; r++) {
      round();
    }
    long heapAfter = heapAfterGc();
    assertTrue(
        heapAfter <= heapBefore + 16L * 1024 * 1024,
        "heap grew from " + (heapBefore >> 20) + " MiB to " + (heapAfter >> 20) + " MiB");
    assertEquals(countedBefore + 4 * MAX_CALLS, refusalsCounted(), "refusals counted");
  }

  /**
   * 2 x max_calls calls at once, the backend holding those it gets: exactly max_calls reach it, the rest are
   * refused while it still holds them; then it answers. A call's slot is free again before its client sees
   * the answer, so every round starts with none in use.
   */
  private void round() throws Exception {
    held.set(0);
    CountDownLatch release = new CountDownLatch(1);
    answer = release;
    List<ListenableFuture<byte[]>> futures = new ArrayList<>();
    for (int i = 0; i < 2 * MAX_CALLS; i++) {
      futures.add(
          ClientCalls.futureUnaryCall(
              client.newCall(UNARY, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS)),
              AbuseTest.artifactStatus()));
    }
    Await.until(
        "max_calls calls held by the backend and the rest answered",
        Await.TIMEOUT,
        () ->
            held.get() == MAX_CALLS && futures.stream().filter(Future::isDone).count() == MAX_CALLS,
        () -> held.get() + " held, " + futures.stream().filter(Future::isDone).count() + " done");
    List<ListenableFuture<byte[]>> accepted = new ArrayList<>();
    for (ListenableFuture<byte[]> f : futures) {
      if (f.isDone()) {
        assertRefused(f);
      } else {
        accepted.add(f);
      }
    }
    assertEquals(MAX_CALLS, held.get(), "no call beyond the limit reached the backend");
    release.countDown();
    for (ListenableFuture<byte[]> f : accepted) {
      assertArrayEquals("ok".getBytes(StandardCharsets.UTF_8), f.get(30, TimeUnit.SECONDS));
    }
  }

  private static void assertRefused(ListenableFuture<byte[]> f) throws Exception {
    ExecutionException refused = assertThrows(ExecutionException.class, f::get);
    com.google.rpc.Status details = Overloaded.assertRefusal(refused.getCause()).details();
    assertTrue(details.getMessage().contains("[SPARKGATE_OVERLOADED]"), details.getMessage());
  }

  private double refusalsCounted() throws Exception {
    Double v = MetricsScrape.get(proxy.metricsPort()).get(REFUSALS);
    return v == null ? 0 : v;
  }

  private static long heapAfterGc() {
    System.gc();
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
