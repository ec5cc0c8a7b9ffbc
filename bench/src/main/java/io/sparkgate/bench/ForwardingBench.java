package io.sparkgate.bench;

import com.google.common.io.ByteStreams;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Drainable;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.internal.CompositeReadableBuffer;
import io.grpc.internal.ReadableBuffers;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.forward.ProxyRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Per-message and per-call work of the forwarding path: a request read into the byte[] the proxy inspects
 * and forwards (as grpc-java's deframer hands it over: a KnownLength stream over the received buffers) and
 * written back out (as grpc-java's framer drains it); a response adopted as a {@link Payload} and drained
 * into the outgoing frame; and a call's start, where the client's headers are filtered for the backend.
 *
 * <p>Everything is reached through the proxy's public API, as a gRPC server reaches it: the marshallers of
 * the ExecutePlan method that {@link ProxyRegistry} registers, and that method's call handler.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ForwardingBench {
  /** A small ExecutePlan response, Spark's typical 1 MiB-ish arrow batch, and a 4 MiB one. */
  @Param({"1024", "1048576", "4194304"})
  public int size;

  private static final int FRAME = 16 * 1024;
  private byte[] message;
  private final Sink sink = new Sink();
  private MethodDescriptor.Marshaller<byte[]> requests;
  private MethodDescriptor.Marshaller<Payload> responses;
  private ServerMethodDefinition<byte[], Payload> executePlan;
  private final IdleServerCall serverCall = new IdleServerCall();
  private Metadata clientHeaders;

  @Setup
  public void setUp() {
    message = BenchProtocol.batchForBench(size);
    sink.buffer = new byte[message.length + 64];
    executePlan =
        executePlan(
            new ProxyRegistry(
                new UnusedChannel(), "backend-secret", CallHook.Factory.PASS_THROUGH));
    requests = executePlan.getMethodDescriptor().getRequestMarshaller();
    responses = executePlan.getMethodDescriptor().getResponseMarshaller();
    serverCall.method = executePlan.getMethodDescriptor();
    clientHeaders = new Metadata();
    put(
        clientHeaders,
        "authorization",
        "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl");
    put(clientHeaders, "user-agent", "grpc-java-netty/1.70.0");
    put(clientHeaders, "x-spark-connect-session", "5b2a6a1e-7d2c-4f0e-9a3c-1f9d1b2c3d4e");
    put(clientHeaders, "x-user-defined", "spark-client");
    put(clientHeaders, "grpc-accept-encoding", "gzip");
  }

  @SuppressWarnings(
      "unchecked") // the proxy forwards every method as byte[] requests and Payload responses
  private static ServerMethodDefinition<byte[], Payload> executePlan(ProxyRegistry registry) {
    return (ServerMethodDefinition<byte[], Payload>)
        registry.lookupMethod(
            MethodDescriptor.generateFullMethodName(ProxyRegistry.SERVICE_NAME, "ExecutePlan"),
            null);
  }

  private static void put(Metadata m, String k, String v) {
    m.put(Metadata.Key.of(k, Metadata.ASCII_STRING_MARSHALLER), v);
  }

  /** Received bytes to the forwarded byte[] (one copy). */
  @Benchmark
  public byte[] parse() {
    InputStream in = ReadableBuffers.openStream(ReadableBuffers.wrap(message), true);
    return requests.parse(in);
  }

  /** The forwarded byte[] into the outgoing frame, the way grpc-java's MessageFramer writes it. */
  @Benchmark
  public int stream() throws IOException {
    InputStream in = requests.stream(message);
    sink.position = 0;
    if (in instanceof Drainable drainable) {
      return drainable.drainTo(sink);
    }
    return (int) ByteStreams.copy(in, sink);
  }

  /**
   * A response from the received buffers (16 KiB, like the DATA frames it came in) to the outgoing frame:
   * adopted without a copy when large, then drained through the per-thread scratch array.
   */
  @Benchmark
  public int payload() throws IOException {
    CompositeReadableBuffer received = new CompositeReadableBuffer();
    for (int off = 0; off < message.length; off += FRAME) {
      received.addBuffer(ReadableBuffers.wrap(message, off, Math.min(FRAME, message.length - off)));
    }
    Payload payload = responses.parse(ReadableBuffers.openStream(received, true));
    sink.position = 0;
    try (InputStream in = responses.stream(payload)) {
      return ((Drainable) in).drainTo(sink);
    }
  }

  /**
   * A call's start, once per call (independent of {@link #size}): the client's headers copied for the backend
   * without its credentials, the call's hook (here one that passes everything) and its state, and the first
   * request(1). The backend call itself starts with the first message, so no channel is touched.
   */
  @Benchmark
  public ServerCall.Listener<byte[]> callStart() {
    return executePlan.getServerCallHandler().startCall(serverCall, clientHeaders);
  }

  /** The client side of a call that has only started: takes request(1) and the threshold, nothing else. */
  static final class IdleServerCall extends ServerCall<byte[], Payload> {
    MethodDescriptor<byte[], Payload> method;

    @Override
    public void request(int numMessages) {}

    @Override
    public void sendHeaders(Metadata headers) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void sendMessage(Payload message) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close(Status status, Metadata trailers) {
      throw new UnsupportedOperationException("closed with " + status);
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public MethodDescriptor<byte[], Payload> getMethodDescriptor() {
      return method;
    }
  }

  /** The backend: a call's start does not reach it. */
  static final class UnusedChannel extends Channel {
    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
      throw new UnsupportedOperationException("a call's start opened a backend call");
    }

    @Override
    public String authority() {
      return "backend";
    }
  }

  /** An output stream over a preallocated array: stands in for the transport's write buffer. */
  static final class Sink extends OutputStream {
    byte[] buffer;
    int position;

    @Override
    public void write(int b) {
      buffer[position++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      System.arraycopy(b, off, buffer, position, len);
      position += len;
    }
  }
}
