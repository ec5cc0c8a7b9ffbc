package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.rpc.ErrorInfo;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.EventLoops;
import io.sparkgate.forward.ForwardingLimits;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import io.sparkgate.testing.MetricsScrape;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code limits.max_buffered_bytes} on real sockets: a backend that streams 1 MiB result batches as fast as
 * flow control lets it, and clients that start ExecutePlan calls and never read. The proxy must not read the
 * backend faster than the clients take the results, must count what it holds for them, and, once that
 * reaches the limit, refuse new calls at once with RESOURCE_EXHAUSTED and a RetryInfo; when the slow clients
 * go, what they held is released and calls are served again.
 */
final class SlowReaderTest {
  private static final MethodDescriptor<byte[], byte[]> EXECUTE = TestMethods.get("ExecutePlan");
  private static final MethodDescriptor<byte[], byte[]> UNARY = TestMethods.get("ArtifactStatus");
  private static final int MiB = 1024 * 1024;
  private static final long LIMIT = 4L * MiB;
  private static final int SLOW_CALLS = 4;
  private static final String BUFFERED = "sparkgate_buffered_bytes";
  private static final String REFUSED =
      "sparkgate_overload_refusals_total{limit=max_buffered_bytes}";

  @TempDir Path dir;

  @Test
  void clientsThatDoNotRead_backendHeldBack_newCallsRefusedAtTheLimit_servedOnceTheyGo()
      throws Exception {
    // One batch, built once: the backend's sends cost no heap of their own.
    byte[] batch =
        ExecutePlanResponse.newBuilder()
            .setSessionId(UUID.randomUUID().toString())
            .setArrowBatch(
                ExecutePlanResponse.ArrowBatch.newBuilder()
                    .setRowCount(1)
                    .setData(ByteString.copyFrom(new byte[MiB])))
            .build()
            .toByteArray();
    FakeSparkConnect backend = new FakeSparkConnect();
    backend.streamMessage = n -> batch;
    backend.streamCount = 8;
    Server backendServer = backend.serve();
    Files.writeString(
        dir.resolve("sparkgate.yaml"),
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0, plaintext: true}",
            "backend: {address: '127.0.0.1:" + backendServer.getPort() + "'}",
            "auth: {anonymous: true}",
            "limits: {max_buffered_bytes: 4MiB}",
            "admin: {address: 127.0.0.1, port: 0}",
            ""));
    try (Sparkgate proxy = Sparkgate.start(ProxyConfig.load(dir.resolve("sparkgate.yaml")))) {
      ManagedChannel good = channel(proxy.port());
      ManagedChannel slow = channel(proxy.port());
      try {
        assertEquals(
            8, readAll(good), "warm-up: every batch arrives"); // classes, buffers, connections
        long memoryBefore = memory();
        int sentBefore = backend.sent.get();
        double refusedBefore = metric(proxy, REFUSED);

        // Calls whose client never asks for a message: what flow control lets through waits in the
        // proxy.
        backend.streamCount = 100_000; // 100 GiB, were the proxy to read it all
        List<AtomicReference<Status>> closed = new ArrayList<>();
        for (int i = 0; i < SLOW_CALLS; i++) {
          AtomicReference<Status> status = new AtomicReference<>();
          ClientCall<byte[], byte[]> call =
              slow.newCall(EXECUTE, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.MINUTES));
          call.start(
              new ClientCall.Listener<>() {
                @Override
                public void onClose(Status s, Metadata trailers) {
                  status.set(s);
                }
              },
              new Metadata());
          call.sendMessage(executePlan());
          call.halfClose();
          closed.add(status);
        }
        // Wait for every slow call's queue towards its client to be full, not for the first reading
        // at the limit. While the queues fill, the count also holds each message the proxy is
        // handing on, and drops again once that message sits in a queue below its threshold: one
        // full queue and a message in flight read 4 MiB, a moment later 3 MiB, and a new call then
        // was served. A full queue stays full (the clients never read, their windows are used up),
        // and each call has at most one message in flight, so only four full queues reach this
        // count, 12 MiB, three times the limit, and it stays.
        long allQueuesFull = SLOW_CALLS * ((long) ForwardingLimits.RESPONSE_QUEUE_BYTES + MiB);
        Await.until(
            "the proxy to count a full queue for each client that does not read",
            Await.TIMEOUT,
            () -> metric(proxy, BUFFERED) >= allQueuesFull,
            () ->
                "buffered "
                    + metricOrNull(proxy, BUFFERED)
                    + ", backend sent "
                    + backend.sent.get());

        // A new call is refused at once, with Spark's error shape and a retry delay.
        StatusRuntimeException e =
            assertThrows(
                StatusRuntimeException.class,
                () ->
                    ClientCalls.blockingUnaryCall(
                        good,
                        UNARY,
                        CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS),
                        AbuseTest.artifactStatus()));
        ErrorInfo info = Overloaded.assertRefusal(e).info();
        assertTrue(
            e.getStatus().getDescription().contains("limits.max_buffered_bytes"), e.toString());
        assertTrue(
            info.getMetadataOrThrow("messageParameters").contains("\"max_buffered_bytes\""),
            info.toString());
        assertTrue(metric(proxy, REFUSED) >= refusedBefore + 1, "the refusal was not counted");

        // Backpressure reached the backend: per call it sent what the windows and queues hold (the
        // client's window, the proxy's queue towards the client, the proxy's window towards the
        // backend, the backend's own queue), a few MiB, not the 100 GiB it had.
        int sentToSlow = backend.sent.get() - sentBefore;
        assertTrue(
            sentToSlow <= SLOW_CALLS * 16, sentToSlow + " MiB sent for " + SLOW_CALLS + " calls");
        long grown = memory() - memoryBefore;
        assertTrue(
            grown <= SLOW_CALLS * 24L * MiB,
            "heap and direct memory grew by " + (grown / MiB) + " MiB");
        for (AtomicReference<Status> s : closed) {
          assertNull(s.get(), "a slow call ended");
        }

        // The slow clients go: what was held for them is released, and calls are served again.
        slow.shutdownNow();
        Await.until(
            "the bytes held for the slow clients to be released",
            Await.TIMEOUT,
            () -> metric(proxy, BUFFERED) == 0,
            () -> "buffered " + metricOrNull(proxy, BUFFERED));
        backend.streamCount = 8;
        assertEquals(8, readAll(good), "every batch arrives after the slow clients went");
      } finally {
        good.shutdownNow();
        slow.shutdownNow();
      }
    } finally {
      backendServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** A small fixed window, so what the client itself buffers is known. */
  private static ManagedChannel channel(int port) {
    return Channels.plaintext(port).flowControlWindow(MiB).maxInboundMessageSize(4 * MiB).build();
  }

  private static byte[] executePlan() {
    return ExecutePlanRequest.newBuilder()
        .setSessionId(UUID.randomUUID().toString())
        .setUserContext(UserContext.newBuilder().setUserId("slow"))
        .setOperationId(UUID.randomUUID().toString())
        .setPlan(
            Plan.newBuilder()
                .setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery("SELECT 1"))))
        .build()
        .toByteArray();
  }

  /** Reads an ExecatePlan call to its end; the number of messages. */
  private static int readAll(ManagedChannel channel) {
    Iterator<byte[]> it =
        ClientCalls.blockingServerStreamingCall(
            channel,
            EXECUTE,
            CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
            executePlan());
    int n = 0;
    while (it.hasNext()) {
      it.next();
      n++;
    }
    return n;
  }

  private static double metric(Sparkgate proxy, String series) throws Exception {
    Double v = metricOrNull(proxy, series);
    assertNotNull(v, series + " is not exported");
    return v;
  }

  private static Double metricOrNull(Sparkgate proxy, String series) {
    try {
      return MetricsScrape.get(proxy.metricsPort()).get(series);
    } catch (Exception e) {
      return null;
    }
  }

  /** Heap after a GC, and direct memory (the JDK's buffers and Netty's own accounting), together. */
  private static long memory() {
    System.gc();
    System.gc();
    long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (pool.getName().equals("direct")) {
        used += pool.getMemoryUsed();
      }
    }
    return used + Math.max(0, EventLoops.directMemoryUsed());
  }
}
