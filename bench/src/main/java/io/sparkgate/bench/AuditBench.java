package io.sparkgate.bench;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.audit.AuditLog;
import io.sparkgate.audit.AuditStage;
import io.sparkgate.call.Call;
import io.sparkgate.config.AuditConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
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

/**
 * Audit work per call, through the audit package's public API only: the audit stage on the thread serving a
 * small ExecutePlan (request counted and kept, the response's ids read, the record queued), the same with a
 * 1 MiB result batch (its row count read), a call together with the writer building and writing its record
 * (request hash, time, request id, JSON, hash chain, file write), and the writer's cost per prebuilt record.
 * The last two include closing the log, a few tens of microseconds per thousand records. The calls pass the
 * audit stage alone, so their records carry no principal, request head or decision.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class AuditBench {
  private static final int CALLS = 1000;
  private static final Attributes CLIENT =
      Attributes.newBuilder()
          .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, new InetSocketAddress("127.0.0.1", 54321))
          .build();

  private byte[] request;
  private byte[] smallResponse;
  private byte[] bigResponse;
  private Path dir;
  private AuditLog auditLog;
  private AuditStage stage;
  private long expectedWritten;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    request = BenchProtocol.executePlanRequest("5b2a6a1e-7d2c-4f0e-9a3c-1f9d1b2c3d4e", 1024, 1);
    smallResponse = BenchProtocol.batchForBench(16);
    bigResponse = BenchProtocol.batchForBench(1024 * 1024);
    dir = Files.createTempDirectory("audit-bench");
    auditLog = open(dir, 2 * CALLS); // the writer never fills it: see drain
    stage = new AuditStage(auditLog, Clock.systemUTC());
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    auditLog.close();
    delete(dir);
  }

  /** Waits (untimed) for the writer to catch up, so the queue never fills and no record is dropped. */
  @TearDown(Level.Invocation)
  public void drain() throws InterruptedException {
    while (auditLog.written() < expectedWritten) {
      Thread.sleep(1);
    }
  }

  /**
   * A log of its own for each invocation of a benchmark that times the writer: the invocation ends by closing
   * it, which writes everything queued at once. Waiting for the records instead could time the writer's
   * linger, whenever the writer caught up with the benchmark thread before the last record.
   */
  @State(Scope.Thread)
  public static class FreshLog {
    private Path dir;
    private AuditLog log;
    private AuditStage stage;

    @Setup(Level.Invocation)
    public void open() throws IOException {
      // On tmpfs where there is one, so that the close's fsync does not time a disk.
      Path shm = Path.of("/dev/shm");
      dir =
          Files.isDirectory(shm) && Files.isWritable(shm)
              ? Files.createTempDirectory(shm, "audit-bench")
              : Files.createTempDirectory("audit-bench");
      log = AuditBench.open(dir, CALLS);
      stage = new AuditStage(log, Clock.systemUTC());
    }

    @TearDown(Level.Invocation)
    public void delete() throws IOException {
      log.close(); // a second close is a no-op
      if (log.written() != CALLS) {
        throw new IllegalStateException(log.written() + " records written of " + CALLS);
      }
      AuditBench.delete(dir);
    }
  }

  private static AuditLog open(Path dir, int queueSize) throws IOException {
    return AuditLog.open(
        new AuditConfig(
            true,
            Optional.of(dir.resolve("audit.jsonl")),
            1L << 40,
            Duration.ofDays(365),
            queueSize,
            AuditConfig.Fsync.NEVER,
            AuditConfig.DEFAULT_FSYNC_INTERVAL,
            false,
            false),
        Clock.systemUTC());
  }

  private static void delete(Path dir) throws IOException {
    try (var files = Files.list(dir)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Files.delete(p);
      }
    }
    Files.delete(dir);
  }

  /**
   * One small ExecutePlan through the audit stage, on the thread serving it (per call). The record is built
   * by the writer thread, which this does not time (see {@link #drain}).
   */
  @Benchmark
  @OperationsPerInvocation(CALLS)
  public void stagePerCall() throws StatusException {
    calls(stage, smallResponse);
    expectedWritten += CALLS;
  }

  /** The same with a 1 MiB result batch, whose row count the stage reads (per call). */
  @Benchmark
  @OperationsPerInvocation(CALLS)
  public void stagePerCall1MiBBatch() throws StatusException {
    calls(stage, bigResponse);
    expectedWritten += CALLS;
  }

  /**
   * Small ExecutePlans through the audit stage and their records through the writer, until the last is
   * written (per call): the request's hash, the time, the request id, JSON, the hash chain and the file write
   * are the writer's. The two threads overlap, so this is about the slower of the two per call.
   */
  @Benchmark
  @OperationsPerInvocation(CALLS)
  public void callAndRecord(FreshLog fresh) throws StatusException {
    calls(fresh.stage, smallResponse);
    fresh.log.close();
  }

  /** Calls as the pipeline drives the stage: a request, a response (as the proxy forwards it), the end. */
  private void calls(AuditStage audit, byte[] response) throws StatusException {
    for (int i = 0; i < CALLS; i++) {
      CallHook hook = audit.open(new Call("ExecutePlan", new Metadata(), CLIENT));
      hook.onRequest(request);
      hook.onResponse(Payload.of(response));
      hook.onClose(Status.OK);
    }
  }

  /**
   * The writer thread's cost per prebuilt record: JSON line, hash chain, buffered file write (fsync never).
   * Records the audit stage queues are built on the writer too ({@link #callAndRecord}).
   */
  @Benchmark
  @OperationsPerInvocation(CALLS)
  public void writerPerRecord(FreshLog fresh) {
    for (int i = 0; i < CALLS; i++) {
      Map<String, Object> record = AuditLog.newRecord();
      record.put("time", "2025-11-30T04:00:00.000Z");
      record.put("request_id", "1b7e0a3c-8a0e-4d4b-9f51-7e2d3c4b5a69");
      record.put("rpc", "ExecutePlan");
      record.put("client_address", "/127.0.0.1:54321");
      record.put("session_id", "5b2a6a1e-7d2c-4f0e-9a3c-1f9d1b2c3d4e");
      record.put("client_type", "sparkgate-bench");
      record.put(
          "request_sha256", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
      record.put("status", "OK");
      record.put("duration_ms", 3L);
      record.put("bytes_in", 1234L);
      record.put("bytes_out", 1048620L);
      record.put("messages_in", 1L);
      record.put("messages_out", 1L);
      record.put("result_rows", 131072L);
      if (!fresh.log.write(record)) {
        throw new IllegalStateException("audit queue full");
      }
    }
    fresh.log.close();
  }
}
