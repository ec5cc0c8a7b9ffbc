package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import io.sparkgate.testing.MetricsScrape;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Twice the calls the proxy may serve at once, against a slow backend: the calls beyond {@code
 * limits.max_calls} are refused at once with RESOURCE_EXHAUSTED, Spark's error shape and a RetryInfo, the
 * accepted ones complete with the backend's answer, and round after round the proxy's heap stays flat.
 */
final class OverloadTest {
  private static final MethodDescriptor<byte[], byte[]> UNARY = TestMethods.get("ArtifactStatus");
  private static final int MAX_CALLS = 8;
  private static final long BACKEND_DELAY_MS = 1500;

  @TempDir Path dir;
  private final FakeSparkConnect backend = new FakeSparkConnect();
  private Server backendServer;
  private Sparkgate proxy;
  private ManagedChannel client;

  @BeforeEach
  void start() throws Exception {
    backend.reply =
        m -> {
          try {
            Thread.sleep(BACKEND_DELAY_MS);
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
    client.shutdownNow();
    proxy.close();
    backendServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private record Outcome(long nanos, byte[] response, Throwable error) {}

  @Test
  void twiceTheLimit_excessRefusedAtOnceWithRetryInfo_acceptedComplete_heapFlat() throws Exception {
    round(); // warm up: classes, buffers, the backend connections
    long heapBefore = heapAfterGc();
    int refusedInAll = 0;
    for (int r = 0; r < 4; r++) {
      refusedInAll += round();
    }
    long heapAfter = heapAfterGc();
    assertTrue(
        heapAfter <= heapBefore + 16L * 1024 * 1024,
        "heap grew from " + (heapBefore >> 20) + " MiB to " + (heapAfter >> 20) + " MiB");
    double counted =
        MetricsScrape.get(proxy.metricsPort())
            .get("sparkgate_overload_refusals_total{limit=max_calls}");
    assertTrue(counted >= refusedInAll, counted + " counted, " + refusedInAll + " refused");
  }

  /** 2 x max_calls calls at once; the number refused. */
  private int round() throws Exception {
    List<com.google.common.util.concurrent.ListenableFuture<byte[]>> futures = new ArrayList<>();
    long[] started = new long[2 * MAX_CALLS];
    // When each call ended, set on the thread that completed it.
    java.util.concurrent.atomic.AtomicLongArray ended =
        new java.util.concurrent.atomic.AtomicLongArray(2 * MAX_CALLS);
    for (int i = 0; i < 2 * MAX_CALLS; i++) {
      started[i] = System.nanoTime();
      var future =
          ClientCalls.futureUnaryCall(
              client.newCall(UNARY, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS)),
              AbuseTest.artifactStatus());
      int index = i;
      future.addListener(() -> ended.set(index, System.nanoTime()), Runnable::run);
      futures.add(future);
    }
    for (var f : futures) {
      try {
        f.get(30, TimeUnit.SECONDS);
      } catch (ExecutionException refused) {
        // looked at below
      }
    }
    io.sparkgate.testing.Await.until(
        "every call's end to be recorded",
        () -> java.util.stream.IntStream.range(0, ended.length()).allMatch(i -> ended.get(i) != 0));
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 0; i < futures.size(); i++) {
      try {
        byte[] r = futures.get(i).get(30, TimeUnit.SECONDS);
        outcomes.add(new Outcome(ended.get(i) - started[i], r, null));
      } catch (ExecutionException e) {
        outcomes.add(new Outcome(ended.get(i) - started[i], null, e.getCause()));
      }
    }
    int accepted = 0;
    int refused = 0;
    for (Outcome o : outcomes) {
      if (o.error() == null) {
        accepted++;
        assertArrayEquals("ok".getBytes(StandardCharsets.UTF_8), o.response());
        continue;
      }
      refused++;
      assertEquals(Status.Code.RESOURCE_EXHAUSTED, Status.fromThrowable(o.error()).getCode());
      com.google.rpc.Status details = StatusProto.fromThrowable(o.error());
      assertNotNull(details, "no google.rpc.Status in the trailers");
      assertTrue(details.getMessage().contains("[SPARKGATE_OVERLOADED]"), details.getMessage());
      ErrorInfo info = null;
      RetryInfo retry = null;
      for (var any : details.getDetailsList()) {
        if (any.is(ErrorInfo.class)) info = any.unpack(ErrorInfo.class);
        if (any.is(RetryInfo.class)) retry = any.unpack(RetryInfo.class);
      }
      assertNotNull(info, "no ErrorInfo: Spark clients would not show the error class");
      assertEquals("53400", info.getMetadataOrThrow("sqlState"));
      assertNotNull(retry, "no RetryInfo");
      assertTrue(retry.getRetryDelay().getSeconds() >= 1, retry.toString());
      // At once: answered before the backend could have answered anyone.
      assertTrue(
          o.nanos() < TimeUnit.MILLISECONDS.toNanos(BACKEND_DELAY_MS),
          "refused after " + TimeUnit.NANOSECONDS.toMillis(o.nanos()) + " ms");
    }
    assertTrue(accepted >= MAX_CALLS, accepted + " accepted of " + outcomes.size());
    assertTrue(refused >= 1, "none refused at twice the limit");
    return refused;
  }

  private static long heapAfterGc() {
    System.gc();
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
