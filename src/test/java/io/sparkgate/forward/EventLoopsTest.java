package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Channel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;

class EventLoopsTest {
  private static EventLoops start(int threads) {
    // Nothing listens on port 1; channels connect lazily, and nothing here makes a call.
    return EventLoops.start(
        threads,
        java.time.Duration.ZERO,
        () -> NettyChannelBuilder.forAddress("127.0.0.1", 1).usePlaintext());
  }

  @Test
  void eachLoopForwardsOverItsOwnBackendConnection() throws Exception {
    try (EventLoops loops = start(3)) {
      Set<Channel> seen = new HashSet<>();
      for (var loop : loops.loops()) {
        Callable<Channel> onLoop = loops::backendForCurrentThread;
        Channel first = loop.submit(onLoop).get();
        assertEquals(
            first, loop.submit(onLoop).get(), "a loop always gets the same backend channel");
        seen.add(first);
      }
      assertEquals(3, seen.size(), "one backend channel per loop");
      assertEquals(Set.copyOf(loops.backends()), seen);
    }
  }

  @Test
  void otherThreadsTakeTheChannelsInTurn() {
    try (EventLoops loops = start(2)) {
      Set<Channel> seen =
          new HashSet<>(List.of(loops.backendForCurrentThread(), loops.backendForCurrentThread()));
      assertEquals(2, seen.size());
    }
  }

  @Test
  void closingStopsTheBackendChannels() {
    EventLoops loops = start(2);
    loops.close();
    assertTrue(loops.backends().stream().allMatch(c -> c.isShutdown()));
  }

  @Test
  void refusesZeroThreads() {
    assertThrows(IllegalArgumentException.class, () -> start(0));
  }
}
