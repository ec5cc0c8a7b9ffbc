package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.sparkgate.config.BackendConfig;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The backend connection with its composing cumulator, over real sockets: messages of every size, from a
 * few bytes to several megabytes spanning many reads and frames, arrive intact and in order, small ones read
 * as arrays, large ones adopted in their transport buffers.
 */
final class BackendTransportTest {
  private static final MethodDescriptor<byte[], byte[]> SERVER_SIDE =
      TestMethods.get("ExecutePlan");

  @Test
  void messagesOfEverySize_arriveIntact() throws Exception {
    Random random = new Random(7);
    List<byte[]> sent = new ArrayList<>();
    for (int size :
        new int[] {
          0, 1, 5, 1023, 1024, 16_384, 16_385, 32 * 1024, 100_000, 1 << 20, 3 * (1 << 20) + 7
        }) {
      byte[] b = new byte[size];
      random.nextBytes(b);
      sent.add(b);
    }
    ServerServiceDefinition service =
        ServerServiceDefinition.builder(SparkConnectMethods.SERVICE)
            .addMethod(
                SERVER_SIDE,
                ServerCalls.asyncServerStreamingCall(
                    (request, out) -> {
                      sent.forEach(out::onNext);
                      out.onCompleted();
                    }))
            .build();
    Server server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(service)
            .maxInboundMessageSize(16 << 20)
            .build()
            .start();
    ManagedChannel channel =
        BackendTransport.plaintext(
                NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()),
                BackendConfig.DEFAULT_CONNECT_TIMEOUT,
                BackendConfig.DEFAULT_HANDSHAKE_TIMEOUT)
            .maxInboundMessageSize(16 << 20)
            .build();
    try {
      MethodDescriptor<byte[], Payload> method =
          SparkConnectMethods.descriptors().get(SERVER_SIDE.getFullMethodName());
      List<byte[]> received = new ArrayList<>();
      CompletableFuture<Status> done = new CompletableFuture<>();
      ClientCall<byte[], Payload> call = channel.newCall(method, CallOptions.DEFAULT);
      call.start(
          new ClientCall.Listener<>() {
            @Override
            public void onMessage(Payload message) {
              received.add(message.bytes());
              call.request(1);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              done.complete(status);
            }
          },
          new Metadata());
      call.request(1);
      call.sendMessage(new byte[0]);
      call.halfClose();
      assertEquals(Status.Code.OK, done.get(30, TimeUnit.SECONDS).getCode());
      assertEquals(sent.size(), received.size());
      for (int i = 0; i < sent.size(); i++) {
        assertArrayEquals(
            sent.get(i), received.get(i), "message " + i + " of " + sent.get(i).length + " bytes");
      }
    } finally {
      channel.shutdownNow();
      server.shutdownNow();
    }
  }
}
