package io.sparkgate.limits;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.health.v1.HealthGrpc;
import io.sparkgate.call.SparkError;
import io.sparkgate.config.LimitsConfig;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Refuses a new call at once, with RESOURCE_EXHAUSTED and a retry delay in Spark's error shape, while the
 * proxy serves {@code limits.max_calls} calls or holds {@code limits.max_buffered_bytes}: beyond what it can
 * serve, a quick refusal the client retries beats a queue that grows until the heap is gone. Calls in
 * progress are never touched. The health service is exempt, so probes see the proxy up while it sheds load.
 */
public final class CallLimiter implements ServerInterceptor {
  /** When a refused client should try again: long enough for calls to finish, short for a person. */
  static final Duration RETRY_AFTER = Duration.ofSeconds(1);

  /** Which limit refused a call, as the metric's {@code limit} label shows it. */
  public enum Limit {
    MAX_CALLS,
    MAX_BUFFERED_BYTES;

    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private final int maxCalls;
  private final long maxBufferedBytes;
  private final LongSupplier buffered;
  private final AtomicInteger active = new AtomicInteger();
  private final LongAdder refusedCalls = new LongAdder();
  private final LongAdder refusedBytes = new LongAdder();

  /** @param buffered the bytes the proxy holds now */
  public CallLimiter(LimitsConfig limits, LongSupplier buffered) {
    this.maxCalls = limits.maxCalls();
    this.maxBufferedBytes = limits.maxBufferedBytes();
    this.buffered = buffered;
  }

  /** Calls counted against {@code max_calls} now. */
  public int active() {
    return active.get();
  }

  /** Calls refused by this limit. */
  public long refused(Limit limit) {
    return limit == Limit.MAX_CALLS ? refusedCalls.sum() : refusedBytes.sum();
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    if (HealthGrpc.SERVICE_NAME.equals(call.getMethodDescriptor().getServiceName())) {
      return next.startCall(call, headers);
    }
    if (buffered.getAsLong() >= maxBufferedBytes) {
      refusedBytes.increment();
      return refuse(call, Limit.MAX_BUFFERED_BYTES);
    }
    if (active.incrementAndGet() > maxCalls) {
      active.decrementAndGet();
      refusedCalls.increment();
      return refuse(call, Limit.MAX_CALLS);
    }
    AtomicBoolean released = new AtomicBoolean();
    Runnable release =
        () -> {
          if (released.compareAndSet(false, true)) {
            active.decrementAndGet();
          }
        };
    ServerCall.Listener<Q> listener;
    try {
      listener =
          next.startCall(
              new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                @Override
                public void close(Status status, Metadata trailers) {
                  release.run();
                  super.close(status, trailers);
                }
              },
              headers);
    } catch (RuntimeException e) {
      release.run();
      throw e;
    }
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
      @Override
      public void onComplete() {
        release.run();
        super.onComplete();
      }

      @Override
      public void onCancel() {
        release.run();
        super.onCancel();
      }
    };
  }

  private static <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, Limit limit) {
    StatusException e =
        new SparkError(
                Status.Code.RESOURCE_EXHAUSTED,
                "SPARKGATE_OVERLOADED",
                "Sparkgate is at its limit of "
                    + (limit == Limit.MAX_CALLS ? "concurrent calls" : "buffered bytes")
                    + " (limits."
                    + limit.label()
                    + "); retry shortly.",
                // 53400 configuration_limit_exceeded, as for quotas: a configured limit on what
                // runs now.
                "53400",
                Map.of("limit", limit.label()),
                Optional.of(RETRY_AFTER))
            .toException();
    call.close(e.getStatus(), e.getTrailers() == null ? new Metadata() : e.getTrailers());
    return new ServerCall.Listener<>() {};
  }
}
