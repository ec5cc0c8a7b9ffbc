package io.sparkgate.testing;

import static io.sparkgate.testing.WireBytes.utf8;

import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.sparkgate.forward.TestMethods;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A backend for every forwarded method shape: unary echoes through {@link #reply}, ExecutePlan streams
 * {@link #streamCount} messages honouring flow control, AddArtifacts counts what it received.
 */
public final class FakeSparkConnect extends io.grpc.HandlerRegistry {
  public final BlockingQueue<byte[]> received = new LinkedBlockingQueue<>();
  public final AtomicReference<String> lastMethod = new AtomicReference<>();
  public final AtomicReference<Metadata> lastHeaders = new AtomicReference<>();
  public final AtomicReference<Deadline> lastDeadline = new AtomicReference<>();
  public final AtomicInteger sent = new AtomicInteger();
  public final CountDownLatch streamStarted = new CountDownLatch(1);
  public final CountDownLatch streamCancelled = new CountDownLatch(1);
  public final Metadata failTrailers = new Metadata();
  public volatile java.util.function.UnaryOperator<byte[]> reply = m -> utf8("ok");
  public volatile Status failWith;
  public volatile int streamCount = 3;
  public volatile java.util.function.IntFunction<byte[]> streamMessage = n -> utf8("batch-" + n);

  /**
   * After its {@link #streamCount} messages, ExecutePlan stays open until the client cancels it, as a query
   * whose client stopped reading does: calls that only a cancel ends, at a known cost per call.
   */
  public volatile boolean holdOpen;

  /** Serves this fake on a real socket, a free port of 127.0.0.1, over plaintext HTTP/2. */
  public Server serve() throws IOException {
    return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .fallbackHandlerRegistry(this)
        .build()
        .start();
  }

  @Override
  public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
    MethodDescriptor<byte[], byte[]> method = TestMethods.ALL.get(methodName);
    return method == null ? null : ServerMethodDefinition.create(method, handler(method));
  }

  private ServerCallHandler<byte[], byte[]> handler(MethodDescriptor<byte[], byte[]> method) {
    return (call, headers) -> {
      calls.incrementAndGet();
      lastMethod.set(method.getFullMethodName());
      lastHeaders.set(headers);
      lastDeadline.set(io.grpc.Context.current().getDeadline());
      call.request(1);
      return new ServerCall.Listener<>() {
        int count;

        @Override
        public void onMessage(byte[] message) {
          received.add(message);
          count++;
          call.request(1);
        }

        @Override
        public void onHalfClose() {
          if (failWith != null) {
            call.close(failWith, failTrailers);
            return;
          }
          call.sendHeaders(new Metadata());
          switch (method.getType()) {
            case SERVER_STREAMING -> stream(call);
            case CLIENT_STREAMING -> {
              call.sendMessage(utf8("received " + count));
              call.close(Status.OK, new Metadata());
            }
            default -> {
              call.sendMessage(reply.apply(received.peek() == null ? new byte[4] : lastReceived()));
              call.close(Status.OK, new Metadata());
            }
          }
        }

        private byte[] lastReceived() {
          byte[] last = null;
          for (byte[] b : received) {
            last = b;
          }
          return last;
        }

        @Override
        public void onReady() {
          if (method.getType() == MethodDescriptor.MethodType.SERVER_STREAMING && started) {
            pump(call);
          }
        }

        @Override
        public void onCancel() {
          cancelled.incrementAndGet();
          streamCancelled.countDown();
        }

        boolean started;
        int next;

        private void stream(ServerCall<byte[], byte[]> call) {
          started = true;
          streamStarted.countDown();
          pump(call);
        }

        private void pump(ServerCall<byte[], byte[]> call) {
          while (call.isReady() && next < streamCount) {
            call.sendMessage(streamMessage.apply(next++));
            sent.incrementAndGet();
          }
          if (next == streamCount) {
            next++;
            if (!holdOpen) {
              call.close(Status.OK, new Metadata());
            }
          }
        }
      };
    };
  }

  public final AtomicInteger calls = new AtomicInteger();
  public final AtomicInteger cancelled = new AtomicInteger();
}
