package io.sparkgate.bench;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NegotiationType;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.net.ssl.SSLException;
import org.HdrHistogram.Histogram;

/**
 * Drives Spark Connect-shaped load at one endpoint and measures it: closed-loop latency of a small
 * ExecutePlan, open-loop latency at a fixed rate (with and without coordinated-omission correction),
 * streaming throughput over N concurrent ExecutePlan streams, a paced slow reader, and idle sessions.
 * Every client call runs its callbacks on the transport thread (directExecutor) and reads responses with
 * one copy into a reused buffer, identically for every endpoint compared.
 */
public final class LoadGenerator {
  private static final long MAX_LATENCY_NANOS = TimeUnit.SECONDS.toNanos(120);

  private LoadGenerator() {}

  /**
   * Where the open loop, the slow reader and the alternating caller read the time and wait on it: the
   * machine's ({@link #SYSTEM}), or a test's that moves only when something waits on it, so that what those
   * scenarios compute from the time can be checked exactly.
   */
  public interface Clock {
    long nanoTime();

    /** Returns once {@link #nanoTime()} has reached {@code nanos}. */
    void sleepUntil(long nanos);

    /** Runs {@code action} on {@code timer} once {@code delayNanos} have passed on this clock. */
    void after(ScheduledExecutorService timer, long delayNanos, Runnable action);
  }

  /** The machine's monotonic clock. */
  public static final Clock SYSTEM =
      new Clock() {
        @Override
        public long nanoTime() {
          return System.nanoTime();
        }

        @Override
        public void sleepUntil(long nanos) {
          long now;
          while ((now = System.nanoTime()) < nanos) {
            LockSupport.parkNanos(nanos - now);
          }
        }

        @Override
        public void after(ScheduledExecutorService timer, long delayNanos, Runnable action) {
          timer.schedule(action, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        }
      };

  /**
   * One endpoint under test.
   *
   * @param caFile CA certificate (PEM) to trust for TLS; null for plaintext
   * @param bearerToken sent as {@code authorization: Bearer <token>} on every call; null for none
   */
  public record Target(String name, String host, int port, Path caFile, String bearerToken) {
    public Target withToken(String token) {
      return new Target(name, host, port, caFile, token);
    }
  }

  /** Latency percentiles in microseconds. */
  public record Latency(
      long count, double p50, double p90, double p99, double p999, double max, double mean) {
    static Latency of(Histogram h) {
      return new Latency(
          h.getTotalCount(),
          us(h.getValueAtPercentile(50)),
          us(h.getValueAtPercentile(90)),
          us(h.getValueAtPercentile(99)),
          us(h.getValueAtPercentile(99.9)),
          us(h.getMaxValue()),
          Math.round(h.getMean() / 10.0) / 100.0);
    }

    private static double us(long nanos) {
      return Math.round(nanos / 10.0) / 100.0;
    }
  }

  public record ClosedLoop(
      int concurrency, double seconds, double callsPerSecond, long errors, Latency latency) {}

  public record OpenLoop(
      int targetRate,
      double achievedRate,
      double seconds,
      long errors,
      long late,
      Latency latency,
      Latency corrected) {}

  public record Streaming(
      int streams,
      int batchBytes,
      double seconds,
      long bytes,
      double mbPerSecond,
      long calls,
      long errors) {}

  public record SlowRead(
      long bytes, double seconds, double mbPerSecond, long errors, String status) {}

  /** A channel to the target: TLS when it has a CA file, plaintext otherwise; the bearer token if any. */
  public static ManagedChannel channel(Target target) {
    NettyChannelBuilder b =
        NettyChannelBuilder.forAddress(target.host(), target.port())
            .directExecutor()
            .maxInboundMessageSize(256 * 1024 * 1024);
    if (target.caFile() == null) {
      b.usePlaintext();
    } else {
      try {
        b.negotiationType(NegotiationType.TLS)
            .sslContext(GrpcSslContexts.forClient().trustManager(target.caFile().toFile()).build())
            .overrideAuthority("localhost");
      } catch (SSLException e) {
        throw new IllegalStateException("cannot build a TLS client for " + target.name(), e);
      }
    }
    if (target.bearerToken() != null) {
      Metadata headers = new Metadata();
      headers.put(
          Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
          "Bearer " + target.bearerToken());
      b.intercept(MetadataUtils.newAttachHeadersInterceptor(headers));
    }
    return b.build();
  }

  private static Histogram histogram() {
    return new Histogram(MAX_LATENCY_NANOS, 3);
  }

  /** Starts one ExecutePlan; {@code done} gets its status, {@code onBytes} each response's length. */
  public static ClientCall<byte[], Integer> execute(
      Channel channel,
      byte[] request,
      LongConsumer onBytes,
      java.util.function.Consumer<Status> done) {
    ClientCall<byte[], Integer> call =
        channel.newCall(BenchProtocol.EXECUTE_PLAN, CallOptions.DEFAULT);
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(Integer length) {
            onBytes.accept(length);
            call.request(1);
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            done.accept(status);
          }
        },
        new Metadata());
    call.sendMessage(request);
    call.halfClose();
    call.request(1);
    return call;
  }

  /** A long consumer that does not box. */
  @FunctionalInterface
  public interface LongConsumer {
    void accept(long value);
  }

  static void smallCall(Channel channel, byte[] request) throws InterruptedException {
    CompletableFuture<Status> result = new CompletableFuture<>();
    execute(channel, request, n -> {}, result::complete);
    Status status;
    try {
      status = result.get(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("small ExecutePlan did not finish", e);
    }
    if (!status.isOk()) {
      throw status.asRuntimeException();
    }
  }

  /**
   * {@code concurrency} callers, each on its own connection, each sending a small ExecutePlan (one tiny
   * batch back) as soon as its previous one finished.
   */
  public static ClosedLoop closedLoop(
      Target target, int concurrency, Duration warmup, Duration measure)
      throws InterruptedException {
    List<ManagedChannel> channels = new ArrayList<>();
    for (int i = 0; i < concurrency; i++) {
      channels.add(channel(target));
    }
    byte[] request = BenchProtocol.executePlanRequest(UUID.randomUUID().toString(), 16, 1);
    Histogram all = histogram();
    AtomicLong errors = new AtomicLong();
    long warmEnd = System.nanoTime() + warmup.toNanos();
    long end = warmEnd + measure.toNanos();
    List<Thread> threads = new ArrayList<>();
    for (ManagedChannel ch : channels) {
      Thread t =
          new Thread(
              () -> {
                Histogram mine = histogram();
                while (true) {
                  long start = System.nanoTime();
                  if (start >= end) {
                    break;
                  }
                  try {
                    smallCall(ch, request);
                    long took = System.nanoTime() - start;
                    if (start >= warmEnd) {
                      mine.recordValue(Math.min(took, MAX_LATENCY_NANOS));
                    }
                  } catch (InterruptedException e) {
                    return;
                  } catch (RuntimeException e) {
                    errors.incrementAndGet();
                  }
                }
                synchronized (all) {
                  all.add(mine);
                }
              },
              "closed-loop");
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    channels.forEach(ManagedChannel::shutdownNow);
    double seconds = measure.toNanos() / 1e9;
    return new ClosedLoop(
        concurrency, seconds, all.getTotalCount() / seconds, errors.get(), Latency.of(all));
  }

  /**
   * Small ExecutePlans started at a fixed rate on one connection whatever the responses do. Latency is
   * measured from the actual start and, corrected for coordinated omission, from the intended start.
   */
  public static OpenLoop openLoop(Target target, int rate, Duration warmup, Duration measure)
      throws InterruptedException {
    ManagedChannel ch = channel(target);
    try {
      byte[] request = BenchProtocol.executePlanRequest(UUID.randomUUID().toString(), 16, 1);
      smallCall(ch, request); // connect before the clock starts
      Histogram raw = histogram();
      Histogram corrected = histogram();
      OpenWindow w = openWindow(ch, request, rate, warmup, measure, raw, corrected, SYSTEM);
      return new OpenLoop(
          rate,
          w.completed() / w.seconds(),
          w.seconds(),
          w.errors(),
          w.late(),
          Latency.of(raw),
          Latency.of(corrected));
    } finally {
      ch.shutdownNow();
    }
  }

  /** What one open-loop window did: calls completed and failed, calls started late, its measured length. */
  public record OpenWindow(long completed, long errors, long late, double seconds) {}

  /**
   * One open-loop window on an open channel: small ExecutePlans started at {@code rate} for {@code lead} plus
   * {@code measure}, each recorded into {@code raw} (from its actual start) and {@code corrected} (from its
   * intended start) when intended inside {@code measure}, on {@code clock}. Returns once every call started
   * has finished (or after 30 s), so that windows run one after another do not overlap.
   */
  public static OpenWindow openWindow(
      ManagedChannel ch,
      byte[] request,
      int rate,
      Duration lead,
      Duration measure,
      Histogram raw,
      Histogram corrected,
      Clock clock)
      throws InterruptedException {
    AtomicLong errors = new AtomicLong();
    AtomicLong completed = new AtomicLong();
    long late = 0;
    int maxOutstanding = Math.max(1000, rate * 5);
    Semaphore outstanding = new Semaphore(maxOutstanding);
    long period = TimeUnit.SECONDS.toNanos(1) / rate;
    long begin = clock.nanoTime();
    long measureFrom = begin + lead.toNanos();
    long end = measureFrom + measure.toNanos();
    for (long i = 0; ; i++) {
      long intended = begin + i * period;
      if (intended >= end) {
        break;
      }
      clock.sleepUntil(intended);
      if (clock.nanoTime() - intended > period) {
        late++;
      }
      outstanding.acquire();
      long actual = clock.nanoTime();
      boolean measured = intended >= measureFrom;
      execute(
          ch,
          request,
          n -> {},
          status -> {
            long t = clock.nanoTime();
            if (measured) {
              if (status.isOk()) {
                synchronized (raw) {
                  raw.recordValue(Math.min(t - actual, MAX_LATENCY_NANOS));
                  corrected.recordValue(Math.min(t - intended, MAX_LATENCY_NANOS));
                }
                completed.incrementAndGet();
              } else {
                errors.incrementAndGet();
              }
            }
            outstanding.release();
          });
    }
    // Let the calls in flight finish (they count: they were intended inside the window).
    if (outstanding.tryAcquire(maxOutstanding, 30, TimeUnit.SECONDS)) {
      outstanding.release(maxOutstanding);
    }
    long finishedAt = clock.nanoTime();
    synchronized (raw) {
      return new OpenWindow(
          completed.get(), errors.get(), late, (Math.max(end, finishedAt) - measureFrom) / 1e9);
    }
  }

  /**
   * {@code streams} concurrent ExecutePlan streams, each on its own connection, each asking for
   * {@code batchesPerCall} batches of {@code batchBytes} and starting another call when one ends.
   */
  public static Streaming streaming(
      Target target,
      int streams,
      int batchBytes,
      int batchesPerCall,
      Duration warmup,
      Duration measure)
      throws InterruptedException {
    byte[] request =
        BenchProtocol.executePlanRequest(UUID.randomUUID().toString(), batchBytes, batchesPerCall);
    AtomicLong bytes = new AtomicLong();
    AtomicLong calls = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    List<ManagedChannel> channels = new ArrayList<>();
    CountDownLatch stopped = new CountDownLatch(streams);
    long measureFrom = System.nanoTime() + warmup.toNanos();
    long end = measureFrom + measure.toNanos();
    for (int i = 0; i < streams; i++) {
      ManagedChannel ch = channel(target);
      channels.add(ch);
      new Object() {
        void next() {
          if (System.nanoTime() >= end) {
            stopped.countDown();
            return;
          }
          execute(
              ch,
              request,
              n -> {
                if (System.nanoTime() >= measureFrom) {
                  bytes.addAndGet(n);
                }
              },
              status -> {
                calls.incrementAndGet();
                // Calls cut off by the end of the run are cancelled on purpose.
                if (!status.isOk() && System.nanoTime() < end) {
                  errors.incrementAndGet();
                }
                next();
              });
        }
      }.next();
    }
    long now;
    while ((now = System.nanoTime()) < end) {
      LockSupport.parkNanos(end - now);
    }
    long total = bytes.get();
    channels.forEach(ManagedChannel::shutdownNow);
    stopped.await(10, TimeUnit.SECONDS);
    double seconds = measure.toNanos() / 1e9;
    return new Streaming(
        streams, batchBytes, seconds, total, total / seconds / 1e6, calls.get(), errors.get());
  }

  /**
   * One client reading {@code totalBytes} in batches of {@code batchBytes} no faster than
   * {@code bytesPerSecond}: it asks for the next message only when its budget allows, so the whole
   * result backs up behind flow control in the proxy and the backend. Paced on {@code clock}.
   */
  public static SlowRead slowRead(
      Target target, long totalBytes, long bytesPerSecond, int batchBytes, Clock clock)
      throws InterruptedException {
    ManagedChannel ch = channel(target);
    long batches = Math.max(1, totalBytes / batchBytes);
    byte[] request =
        BenchProtocol.executePlanRequest(UUID.randomUUID().toString(), batchBytes, batches);
    ScheduledExecutorService pacer = Executors.newSingleThreadScheduledExecutor();
    AtomicLong read = new AtomicLong();
    CompletableFuture<Status> done = new CompletableFuture<>();
    long start = clock.nanoTime();
    ClientCall<byte[], Integer> call = ch.newCall(BenchProtocol.EXECUTE_PLAN, CallOptions.DEFAULT);
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(Integer length) {
            long soFar = read.addAndGet(length);
            long due = start + (long) (soFar * 1e9 / bytesPerSecond);
            clock.after(pacer, due - clock.nanoTime(), () -> call.request(1));
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            done.complete(status);
          }
        },
        new Metadata());
    call.sendMessage(request);
    call.halfClose();
    call.request(1);
    Status status;
    try {
      status = done.get(totalBytes / bytesPerSecond * 3 + 120, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      call.cancel("slow reader timed out", e);
      status = Status.DEADLINE_EXCEEDED;
    }
    double seconds = (clock.nanoTime() - start) / 1e9;
    pacer.shutdownNow();
    ch.shutdownNow();
    return new SlowRead(
        read.get(),
        seconds,
        read.get() / seconds / 1e6,
        status.isOk() ? 0 : 1,
        status.getCode().name());
  }

  /** Connections that each made one small call and then stay open, idle, until closed. */
  public static final class IdleSessions implements AutoCloseable {
    private final List<ManagedChannel> channels;
    public final double openSeconds;

    private IdleSessions(List<ManagedChannel> channels, double openSeconds) {
      this.channels = channels;
      this.openSeconds = openSeconds;
    }

    public int size() {
      return channels.size();
    }

    @Override
    public void close() throws InterruptedException {
      channels.forEach(ManagedChannel::shutdownNow);
      for (ManagedChannel ch : channels) {
        ch.awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  /** Opens {@code n} sessions, each its own connection with its own session id and one finished call. */
  public static IdleSessions idleSessions(Target target, int n) throws InterruptedException {
    long start = System.nanoTime();
    List<ManagedChannel> channels = new ArrayList<>();
    Semaphore inFlight = new Semaphore(64);
    AtomicLong failed = new AtomicLong();
    for (int i = 0; i < n; i++) {
      ManagedChannel ch = channel(target);
      channels.add(ch);
      inFlight.acquire();
      byte[] request = BenchProtocol.executePlanRequest(UUID.randomUUID().toString(), 16, 1);
      execute(
          ch,
          request,
          x -> {},
          status -> {
            if (!status.isOk()) {
              failed.incrementAndGet();
            }
            inFlight.release();
          });
    }
    inFlight.acquire(64);
    if (failed.get() > 0) {
      channels.forEach(ManagedChannel::shutdownNow);
      throw new IllegalStateException(failed.get() + " of " + n + " sessions failed to open");
    }
    return new IdleSessions(channels, (System.nanoTime() - start) / 1e9);
  }

  /** An empty latency histogram of the generator's range and precision (nanoseconds, three digits). */
  public static Histogram newHistogram() {
    return histogram();
  }

  /**
   * One caller on one connection that stays open between calls: the alternating latency scenario calls the
   * endpoints in turn, one call each, over connections opened once.
   */
  public static final class Caller implements AutoCloseable {
    private final ManagedChannel channel;
    private final Clock clock;
    private final byte[] request =
        BenchProtocol.executePlanRequest(UUID.randomUUID().toString(), 16, 1);

    /** A caller timing its calls on {@code clock}. */
    public Caller(Target target, Clock clock) {
      this.channel = channel(target);
      this.clock = clock;
    }

    /** One small ExecutePlan: its latency in nanoseconds, or -1 when it failed. */
    public long once() throws InterruptedException {
      long start = clock.nanoTime();
      try {
        smallCall(channel, request);
        return Math.min(clock.nanoTime() - start, MAX_LATENCY_NANOS);
      } catch (RuntimeException e) {
        return -1;
      }
    }

    @Override
    public void close() {
      channel.shutdownNow();
    }
  }

  /** Sends one small ExecutePlan; throws if it does not succeed (used to wait for an endpoint to be up). */
  public static void probe(Target target) throws InterruptedException {
    ManagedChannel ch = channel(target);
    try {
      smallCall(ch, BenchProtocol.executePlanRequest("probe", 16, 1));
    } finally {
      ch.shutdownNow();
    }
  }
}
