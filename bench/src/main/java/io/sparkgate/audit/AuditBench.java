package io.sparkgate.audit;

import com.google.protobuf.CodedInputStream;
import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.sparkgate.bench.BenchProtocol;
import io.sparkgate.config.AuditConfig;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Audit work per call as it exists today: scanning a request and a response for the recorded ids, counting
 * arrow rows in a 1 MiB batch, the whole interceptor for one small ExecutePlan (request side: evidence,
 * SHA-256, record building, enqueue), and the writer's per-record cost (JSON, hash chain, file write).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class AuditBench {
  private static final int CALLS = 1000;
  private static final MethodDescriptor<byte[], byte[]> EXECUTE_PLAN =
      MethodDescriptor.newBuilder(BenchProtocol.RawMarshaller.INSTANCE, BenchProtocol.RawMarshaller.INSTANCE)
          .setFullMethodName(BenchProtocol.SERVICE + "/ExecutePlan")
          .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
          .build();

  private byte[] request;
  private byte[] smallResponse;
  private byte[] bigResponse;
  private WireScanner requestScanner;
  private WireScanner responseScanner;
  private Path dir;
  private AuditLog auditLog;
  private AuditInterceptor interceptor;
  private long expectedWritten;
  private final Metadata headers = new Metadata();
  /** The call as the interceptor hands it on (what the forwarding code answers on). */
  private ServerCall<byte[], byte[]> inner;
  private final ServerCallHandler<byte[], byte[]> next = (call, h) -> {
    inner = call;
    return new ServerCall.Listener<>() {};
  };

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    request = BenchProtocol.executePlanRequest("5b2a6a1e-7d2c-4f0e-9a3c-1f9d1b2c3d4e", 1024, 1);
    smallResponse = BenchProtocol.batchForBench(16);
    bigResponse = BenchProtocol.batchForBench(1024 * 1024);
    requestScanner = new WireScanner(io.sparkgate.proto.spark.ExecutePlanRequest.getDescriptor(),
        Set.of("session_id", "operation_id", "client_type"));
    responseScanner = new WireScanner(ExecutePlanResponse.getDescriptor(),
        Set.of("server_side_session_id", "operation_id"), "response_", true);
    dir = Files.createTempDirectory("audit-bench");
    // A queue of twice an invocation's records: the writer, lingering between batches, is woken by the last
    // record of each invocation (half the queue), so writerPerRecord does not time its 5 ms linger.
    auditLog = AuditLog.open(new AuditConfig(true, Optional.of(dir.resolve("audit.jsonl")), 1L << 40,
        Duration.ofDays(365), 2 * CALLS, AuditConfig.Fsync.NEVER, AuditConfig.DEFAULT_FSYNC_INTERVAL, false,
        false), Clock.systemUTC());
    interceptor = new AuditInterceptor(auditLog, Clock.systemUTC());
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    auditLog.close();
    try (var files = Files.list(dir)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Files.delete(p);
      }
    }
    Files.delete(dir);
  }

  /** Waits (untimed) for the writer to catch up, so the queue never fills and no record is dropped. */
  @TearDown(Level.Invocation)
  public void drain() throws InterruptedException {
    while (auditLog.written() < expectedWritten) {
      Thread.sleep(1);
    }
  }

  @Benchmark
  public void scanRequest(Blackhole fields) {
    requestScanner.scan(CodedInputStream.newInstance(request), (name, value) -> fields.consume(value));
  }

  @Benchmark
  public long scanResponse(Blackhole fields) {
    return responseScanner.scan(CodedInputStream.newInstance(smallResponse), (name, value) -> fields.consume(value));
  }

  @Benchmark
  public long arrowRows1MiB(Blackhole fields) {
    return responseScanner.scan(CodedInputStream.newInstance(bigResponse), (name, value) -> fields.consume(value));
  }

  /**
   * One small ExecutePlan through the audit interceptor, on the request threads (per call). The record is
   * built by the writer thread, which this does not time (see {@link #drain}).
   */
  @Benchmark
  @OperationsPerInvocation(CALLS)
  public void interceptorPerCall() {
    for (int i = 0; i < CALLS; i++) {
      FakeCall call = new FakeCall();
      ServerCall.Listener<byte[]> listener = interceptor.interceptCall(call, headers, next);
      listener.onMessage(request);
      listener.onHalfClose();
      inner.sendHeaders(new Metadata());
      inner.sendMessage(smallResponse);
      inner.close(Status.OK, new Metadata());
    }
    expectedWritten += CALLS;
  }

  /**
   * The writer thread's cost per prebuilt record: JSON line, hash chain, buffered file write (fsync never).
   * Records the interceptor queues are built on the writer too (request hash and fields, formatting).
   */
  @Benchmark
  @OperationsPerInvocation(CALLS)
  public void writerPerRecord() throws InterruptedException {
    for (int i = 0; i < CALLS; i++) {
      Map<String, Object> record = AuditLog.newRecord();
      record.put("time", "2025-11-30T04:00:00.000Z");
      record.put("request_id", "1b7e0a3c-8a0e-4d4b-9f51-7e2d3c4b5a69");
      record.put("rpc", "ExecutePlan");
      record.put("client_address", "/127.0.0.1:54321");
      record.put("session_id", "5b2a6a1e-7d2c-4f0e-9a3c-1f9d1b2c3d4e");
      record.put("client_type", "sparkgate-bench");
      record.put("request_sha256", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
      record.put("status", "OK");
      record.put("duration_ms", 3L);
      record.put("bytes_in", 1234L);
      record.put("bytes_out", 1048620L);
      record.put("messages_in", 1L);
      record.put("messages_out", 1L);
      record.put("result_rows", 131072L);
      if (!auditLog.write(record)) {
        throw new IllegalStateException("audit queue full");
      }
    }
    expectedWritten += CALLS;
    while (auditLog.written() < expectedWritten) {
      Thread.onSpinWait();
    }
  }

  /** A server call that goes nowhere, with a client address like a real one. */
  private static final class FakeCall extends ServerCall<byte[], byte[]> {
    private static final Attributes ATTRS = Attributes.newBuilder()
        .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, new InetSocketAddress("127.0.0.1", 54321)).build();

    @Override
    public void request(int numMessages) {}

    @Override
    public void sendHeaders(Metadata headers) {}

    @Override
    public void sendMessage(byte[] message) {}

    @Override
    public void close(Status status, Metadata trailers) {}

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public Attributes getAttributes() {
      return ATTRS;
    }

    @Override
    public MethodDescriptor<byte[], byte[]> getMethodDescriptor() {
      return EXECUTE_PLAN;
    }
  }
}
