package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;
import io.sparkgate.Sparkgate;
import io.sparkgate.bench.BenchBackend;
import io.sparkgate.bench.BenchProtocol;
import io.sparkgate.bench.LoadGenerator;
import io.sparkgate.config.ListenConfig;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.TestConfigs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** A proxy whose event loops spin before they sleep ({@code listen.event_loop_spin}) forwards as one that does not. */
class SpinningLoopsTest {
  @Test
  void smallCallsAndStreams_forwardedBySpinningLoops() throws Exception {
    try (BenchBackend backend = BenchBackend.start(0)) {
      ListenConfig listen =
          TestConfigs.listen(
              true, 64L * 1024 * 1024, Duration.ofSeconds(5), 2, Duration.ofNanos(200_000));
      Sparkgate proxy =
          Sparkgate.start(TestConfigs.proxy(listen, Optional.empty(), "127.0.0.1", backend.port()));
      try {
        LoadGenerator.Target target =
            new LoadGenerator.Target("sparkgate", "127.0.0.1", proxy.port(), null, "t");
        ExecutorService callers = Executors.newFixedThreadPool(4);
        List<ManagedChannel> channels = new ArrayList<>();
        try {
          for (int i = 0; i < 4; i++) {
            channels.add(LoadGenerator.channel(target));
          }
          // Small calls: two callers, each starting its next call as soon as its last one ended, so
          // the loops spin between them; each call answers one 16-byte batch.
          byte[] small = BenchProtocol.executePlanRequest("small", 16, 1);
          List<Integer> oneSmallBatch = List.of(BenchProtocol.batchForBench(16).length);
          List<Future<?>> running = new ArrayList<>();
          for (ManagedChannel channel : channels.subList(0, 2)) {
            running.add(
                callers.submit(
                    () -> {
                      for (int call = 0; call < 100; call++) {
                        assertEquals(
                            oneSmallBatch, responseLengths(channel, small), "call " + call);
                      }
                      return null;
                    }));
          }
          // Streams: four at once, each sixteen 256 KiB batches.
          byte[] stream = BenchProtocol.executePlanRequest("stream", 256 * 1024, 16);
          List<Integer> sixteenBatches =
              Collections.nCopies(16, BenchProtocol.batchForBench(256 * 1024).length);
          for (ManagedChannel channel : channels) {
            running.add(
                callers.submit(
                    () -> {
                      assertEquals(sixteenBatches, responseLengths(channel, stream));
                      return null;
                    }));
          }
          for (Future<?> f : running) {
            f.get(Await.TIMEOUT.toSeconds(), TimeUnit.SECONDS);
          }
        } finally {
          callers.shutdownNow();
          channels.forEach(ManagedChannel::shutdownNow);
        }

        // With nothing to do the loops must go back to sleep: a spin that never ended would keep
        // its core busy and never reach the blocking wait. (SpinThenSleepTest checks, on a fake
        // clock, when a spin ends.)
        Await.until(
            "both event loops asleep in their blocking wait",
            Await.TIMEOUT,
            () -> {
              List<Thread> loops = ioThreads().toList();
              return loops.size() >= 2 && loops.stream().allMatch(SpinningLoopsTest::asleep);
            },
            SpinningLoopsTest::ioThreadStacks);
      } finally {
        proxy.close();
      }
    }
  }

  /** The lengths of the responses to one ExecutePlan, which must end OK. */
  private static List<Integer> responseLengths(ManagedChannel channel, byte[] request) {
    List<Integer> lengths = new ArrayList<>();
    ClientCalls.blockingServerStreamingCall(
            channel, BenchProtocol.EXECUTE_PLAN, CallOptions.DEFAULT, request)
        .forEachRemaining(lengths::add);
    return lengths;
  }

  private static Stream<Thread> ioThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("sparkgate-io"));
  }

  /**
   * In epoll_wait (or the NIO selector's select) with a timeout, outside the spin: where a loop waits for
   * events without using its core. While spinning, a loop polls with a zero timeout from inside
   * {@link SpinThenSleep}.
   */
  private static boolean asleep(Thread loop) {
    boolean waiting = false;
    for (StackTraceElement frame : loop.getStackTrace()) {
      if (frame.getClassName().equals(SpinThenSleep.class.getName())) {
        return false;
      }
      waiting |=
          SLEEPING_WAITS.contains(
              frame.getClassName().substring(frame.getClassName().lastIndexOf('.') + 1)
                  + "."
                  + frame.getMethodName());
    }
    return waiting;
  }

  private static final Set<String> SLEEPING_WAITS =
      Set.of(
          "EpollIoHandler.epollWait",
          "EpollIoHandler.epollWaitNoTimerChange",
          "EpollIoHandler.epollWaitTimeboxed",
          "NioIoHandler.select");

  private static String ioThreadStacks() {
    return ioThreads()
        .map(t -> t.getName() + " at " + Arrays.toString(t.getStackTrace()))
        .collect(Collectors.joining("\n"));
  }
}
