package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.sparkgate.testing.Channels;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class EventLoopsTest {
  private static final String BACKEND = "127.0.0.1:1";
  private static final MethodDescriptor<byte[], byte[]> UNARY = TestMethods.get("ArtifactStatus");

  private static EventLoops start(int threads) {
    // Nothing listens on port 1; channels connect lazily, and nothing here calls the backend.
    return EventLoops.start(
        threads,
        Duration.ZERO,
        address -> NettyChannelBuilder.forTarget(address).usePlaintext(),
        BACKEND);
  }

  /**
   * A server on the loops whose calls run on the loop that read them (as the proxy's do) and answer with the
   * identity of the backend channel they would be forwarded over; each client connection is one loop's.
   */
  @Test
  void eachLoopForwardsOverItsOwnBackendConnection() throws Exception {
    try (EventLoops loops = start(3)) {
      Map<Channel, byte[]> ids = new ConcurrentHashMap<>();
      ServerServiceDefinition service =
          ServerServiceDefinition.builder(UNARY.getServiceName())
              .addMethod(
                  UNARY,
                  ServerCalls.asyncUnaryCall(
                      (request, response) -> {
                        Channel backend = loops.backendForCurrentThread();
                        response.onNext(
                            ids.computeIfAbsent(
                                backend, b -> String.valueOf(ids.size()).getBytes()));
                        response.onCompleted();
                      }))
              .build();
      Server server =
          loops
              .serve(NettyServerBuilder.forPort(0), new Acceptor(remote -> () -> {}))
              .directExecutor()
              .addService(service)
              .build()
              .start();
      List<ManagedChannel> clients = new ArrayList<>();
      try {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 3; i++) {
          ManagedChannel client = Channels.plaintext(server.getPort()).build();
          clients.add(client);
          String first = new String(call(client));
          assertEquals(first, new String(call(client)), "a loop always gets the same channel");
          seen.add(first);
        }
        assertEquals(3, seen.size(), "one backend channel per loop: " + seen);
        assertEquals(Map.of(ConnectivityState.IDLE, 3), loops.backendStates());
      } finally {
        clients.forEach(ManagedChannel::shutdownNow);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  private static byte[] call(ManagedChannel client) {
    return ClientCalls.blockingUnaryCall(
        client, UNARY, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), new byte[0]);
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
    assertEquals(Map.of(ConnectivityState.SHUTDOWN, 2), loops.backendStates());
  }

  @Test
  void refusesZeroThreads() {
    assertThrows(IllegalArgumentException.class, () -> start(0));
  }
}
