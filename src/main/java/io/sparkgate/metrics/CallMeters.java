package io.sparkgate.metrics;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts every call by method and status code, times it from its first byte to its end, and keeps the number
 * in progress. Registered outermost, so it sees the calls that authentication, policy or audit refused too.
 *
 * <p>Per call it costs two clock reads, two wrappers and a few counter increments: meters are looked up once
 * per method and code, not per call, because a registry lookup sorts and hashes tags.
 */
final class CallMeters implements ServerInterceptor {
  /** Bucket bounds: a health check or a refusal takes a millisecond, a big ExecutePlan streams for minutes. */
  private static final Duration[] BUCKETS = {
    Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofMillis(25), Duration.ofMillis(100),
    Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(30),
    Duration.ofMinutes(2), Duration.ofMinutes(10), Duration.ofHours(1)
  };

  private final MeterRegistry registry;
  private final Map<String, PerMethod> byMethod = new ConcurrentHashMap<>();
  private final LongAdder started = new LongAdder();
  private final LongAdder ended = new LongAdder();

  CallMeters(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("sparkgate.calls.active", this, m -> m.started.sum() - m.ended.sum())
        .description("Calls in progress")
        .register(registry);
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
      ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
    Counted<ReqT, RespT> counted =
        new Counted<>(call, perMethod(call.getMethodDescriptor()), System.nanoTime());
    started.increment();
    ServerCall.Listener<ReqT> listener;
    try {
      listener = next.startCall(counted, headers);
    } catch (RuntimeException | Error e) {
      counted.end(Status.Code.UNKNOWN); // gRPC closes the stream itself
      throw e;
    }
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
      @Override
      public void onCancel() {
        counted.end(Status.Code.CANCELLED); // the client went away, or the answer could not be sent
        super.onCancel();
      }
    };
  }

  private PerMethod perMethod(MethodDescriptor<?, ?> method) {
    PerMethod m = byMethod.get(method.getFullMethodName());
    return m != null
        ? m
        : byMethod.computeIfAbsent(method.getFullMethodName(), n -> new PerMethod(label(method)));
  }

  /**
   * Spark Connect's methods by their short name, anything else (the health service) in full. Only
   * registered methods reach interceptors, so the label's values are as few as the methods.
   */
  private static String label(MethodDescriptor<?, ?> method) {
    return "spark.connect.SparkConnectService".equals(method.getServiceName())
        ? method.getBareMethodName()
        : method.getFullMethodName();
  }

  /** One method's meters; the counter for a status code is registered when that code first ends a call. */
  private final class PerMethod {
    private final String method;
    private final Timer duration;
    private final Counter[] byCode = new Counter[Status.Code.values().length];

    PerMethod(String method) {
      this.method = method;
      this.duration =
          Timer.builder("sparkgate.call.duration")
              .description("Time from a call's arrival to its end, refusals included")
              .tag("method", method)
              .serviceLevelObjectives(BUCKETS)
              .register(registry);
    }

    void end(Status.Code code, long nanos) {
      Counter c = byCode[code.ordinal()];
      if (c == null) {
        // Racing threads get the same counter back from the registry.
        c =
            Counter.builder("sparkgate.calls")
                .description("Calls ended, by method and gRPC status code")
                .tag("method", method)
                .tag("code", code.name())
                .register(registry);
        byCode[code.ordinal()] = c;
      }
      c.increment();
      duration.record(nanos, TimeUnit.NANOSECONDS);
      ended.increment();
    }
  }

  /** The call, counted once when it ends: closed by the proxy, or cancelled, whichever comes first. */
  private static final class Counted<ReqT, RespT>
      extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {
    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<Counted> ENDED =
        AtomicIntegerFieldUpdater.newUpdater(Counted.class, "ended");

    private final PerMethod meters;
    private final long startNanos;
    private volatile int ended;

    Counted(ServerCall<ReqT, RespT> call, PerMethod meters, long startNanos) {
      super(call);
      this.meters = meters;
      this.startNanos = startNanos;
    }

    @Override
    public void close(Status status, Metadata trailers) {
      end(status.getCode());
      super.close(status, trailers);
    }

    void end(Status.Code code) {
      if (ENDED.compareAndSet(this, 0, 1)) {
        meters.end(code, System.nanoTime() - startNanos);
      }
    }
  }
}
