package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.sparkgate.bench.BenchBackend;
import io.sparkgate.bench.BenchProtocol;
import io.sparkgate.bench.LoadGenerator;
import io.sparkgate.config.ListenConfig;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.TestConfigs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Calls from different clients share the proxy's backend connections (one per event loop). A client that
 * stops reading a large result must stall only its own call: the result bytes the backend has sent meanwhile
 * wait in the proxy against that call's flow-control window, and must not hold the connection's, or every
 * other call on it would wait for the slow reader (gRPC refills the connection window as data arrives).
 */
final class TenantIsolationTest {
  @Test
  void clientsThatStopReading_doNotStallOtherCallsOnTheSameBackendConnection() throws Exception {
    try (BenchBackend backend = BenchBackend.start(0)) {
      // One event loop: every call shares one backend connection.
      ListenConfig listen =
          TestConfigs.listen(true, 128 << 20, Duration.ofSeconds(5), 1, Duration.ZERO);
      try (Sparkgate proxy =
          Sparkgate.start(
              TestConfigs.proxy(listen, Optional.empty(), "127.0.0.1", backend.port()))) {
        List<ManagedChannel> channels = new ArrayList<>();
        try {
          List<ClientCall<byte[], Integer>> stalled = new ArrayList<>();
          AtomicLong stalledMessages = new AtomicLong();
          for (int i = 0; i < 4; i++) {
            // Ask for 256 MiB and read one batch only: the rest backs up into the proxy.
            ManagedChannel slow = channel(proxy.port());
            channels.add(slow);
            ClientCall<byte[], Integer> call =
                slow.newCall(BenchProtocol.EXECUTE_PLAN, CallOptions.DEFAULT);
            call.start(
                new ClientCall.Listener<>() {
                  @Override
                  public void onMessage(Integer length) {
                    stalledMessages.incrementAndGet();
                  }
                },
                new Metadata());
            call.sendMessage(BenchProtocol.executePlanRequest("slow-" + i, 1 << 20, 256));
            call.halfClose();
            call.request(1);
            stalled.add(call);
          }
          Thread.sleep(
              2000); // let every window between backend, proxy and the slow clients fill up

          ManagedChannel other = channel(proxy.port());
          channels.add(other);
          for (int i = 0; i < 3; i++) {
            CompletableFuture<Status> done = new CompletableFuture<>();
            AtomicLong received = new AtomicLong();
            LoadGenerator.execute(
                other,
                BenchProtocol.executePlanRequest("other-" + i, 1 << 20, 4),
                received::addAndGet,
                done::complete);
            assertTrue(done.get(30, TimeUnit.SECONDS).isOk(), "another client's call finished");
            assertTrue(received.get() >= 4L << 20, "and got its whole result: " + received.get());
          }
          // On a loaded machine a slow call's one batch may still be on its way.
          Await.until("each slow call's one batch", () -> stalledMessages.get() >= 4);
          assertEquals(4, stalledMessages.get(), "the slow calls each read just their one batch");
          stalled.forEach(c -> c.cancel("done", null));
        } finally {
          channels.forEach(ManagedChannel::shutdownNow);
        }
      }
    }
  }

  private static ManagedChannel channel(int port) {
    return NettyChannelBuilder.forAddress("127.0.0.1", port)
        .usePlaintext()
        .maxInboundMessageSize(64 << 20)
        .directExecutor()
        .build();
  }
}
