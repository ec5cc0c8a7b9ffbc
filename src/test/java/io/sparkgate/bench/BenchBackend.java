package io.sparkgate.bench;

import io.grpc.HandlerRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A fake Spark Connect server that costs as little as possible, so that what a benchmark measures is the
 * proxy in front of it. ExecutePlan streams canned ExecutePlanResponse batches of the size and count the
 * request asks for (see {@link BenchProtocol#executePlanRequest}), sending while the call is ready and
 * continuing in onReady, so HTTP/2 flow control paces it; every other Spark Connect method answers one
 * small message. Callbacks run on the event loop (directExecutor): no thread hop.
 */
public final class BenchBackend implements AutoCloseable {
  private static final byte[] SMALL_REPLY = new byte[] {0x0a, 0x02, 'o', 'k'};
  private final Server server;

  private BenchBackend(Server server) {
    this.server = server;
  }

  /** Starts on 127.0.0.1:{@code port} (0 for any free port). */
  public static BenchBackend start(int port) throws IOException {
    Server server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
            .fallbackHandlerRegistry(new Registry())
            .directExecutor()
            .maxInboundMessageSize(256 * 1024 * 1024)
            .maxConcurrentCallsPerConnection(10_000)
            .permitKeepAliveTime(1, TimeUnit.SECONDS)
            .permitKeepAliveWithoutCalls(true)
            .build()
            .start();
    return new BenchBackend(server);
  }

  public int port() {
    return server.getPort();
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  /** Runs a backend as its own process: {@code BenchBackend --port N [--port-file F]}. */
  public static void main(String[] args) throws Exception {
    int port = 0;
    Path portFile = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--port" -> port = Integer.parseInt(args[++i]);
        case "--port-file" -> portFile = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    BenchBackend backend = start(port);
    if (portFile != null) {
      Files.writeString(portFile, Integer.toString(backend.port()));
    }
    System.out.println("bench backend listening on 127.0.0.1:" + backend.port());
    backend.server.awaitTermination();
  }

  private static final class Registry extends HandlerRegistry {
    @Override
    public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
      if (!methodName.startsWith(BenchProtocol.SERVICE + "/")) {
        return null;
      }
      boolean execute =
          methodName.endsWith("/ExecutePlan") || methodName.endsWith("/ReattachExecute");
      MethodDescriptor<byte[], byte[]> method =
          MethodDescriptor.newBuilder(
                  BenchProtocol.RawMarshaller.INSTANCE, BenchProtocol.RawMarshaller.INSTANCE)
              .setFullMethodName(methodName)
              .setType(
                  execute
                      ? MethodDescriptor.MethodType.SERVER_STREAMING
                      : MethodDescriptor.MethodType.UNARY)
              .build();
      return ServerMethodDefinition.create(method, execute ? new Execute() : new Small());
    }
  }

  private static final class Small implements ServerCallHandler<byte[], byte[]> {
    @Override
    public ServerCall.Listener<byte[]> startCall(
        ServerCall<byte[], byte[]> call, Metadata headers) {
      call.request(1);
      return new ServerCall.Listener<>() {
        @Override
        public void onHalfClose() {
          call.sendHeaders(new Metadata());
          call.sendMessage(SMALL_REPLY);
          call.close(Status.OK, new Metadata());
        }
      };
    }
  }

  private static final class Execute implements ServerCallHandler<byte[], byte[]> {
    @Override
    public ServerCall.Listener<byte[]> startCall(
        ServerCall<byte[], byte[]> call, Metadata headers) {
      call.request(1);
      return new ServerCall.Listener<>() {
        private byte[] batch;
        private long left = -1;
        private boolean started;

        @Override
        public void onMessage(byte[] message) {
          BenchProtocol.Ask ask = BenchProtocol.parse(message);
          batch = BenchProtocol.batch(ask.batchBytes());
          left = ask.batches();
        }

        @Override
        public void onHalfClose() {
          if (left < 0) {
            call.close(Status.INVALID_ARGUMENT.withDescription("no request"), new Metadata());
            return;
          }
          call.sendHeaders(new Metadata());
          started = true;
          pump();
        }

        @Override
        public void onReady() {
          pump();
        }

        private void pump() {
          if (!started || left < 0) {
            return;
          }
          while (left > 0 && call.isReady()) {
            call.sendMessage(batch);
            left--;
          }
          if (left == 0) {
            left = -1;
            call.close(Status.OK, new Metadata());
          }
        }

        @Override
        public void onCancel() {
          left = -1;
        }
      };
    }
  }
}
