package io.sparkgate.route;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.sparkgate.config.HealthConfig;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether each backend serves, from active probes and from what forwarded calls meet. A backend is usable
 * until it is seen down; it is down from a failed probe or a call that could not reach it, and up again from
 * the next successful probe.
 *
 * <p>The probe is a call of a method no Spark server has ({@value #PROBE_METHOD}): the server's gRPC layer
 * answers UNIMPLEMENTED without running any Spark code, so probes never create a session, never log an
 * error in the server and work on every Spark version. Any answer proves the server is there; only an
 * unreachable server (UNAVAILABLE) or no answer in time counts as a failure, and {@link
 * #FAILED_PROBES_TO_DOWN} in a row as down.
 *
 * <p>The proxy keeps several connections to each backend (one per event loop), and gRPC waits longer and
 * longer between reconnects to a dead server (up to two minutes). A probe of a down backend therefore first
 * asks every connection to it to reconnect now, and so does the probe that finds it up: otherwise the proxy
 * would report the backend up while the connections its calls use still wait out their backoff and fail.
 */
public final class BackendHealth implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BackendHealth.class);
  static final String PROBE_METHOD = "spark.connect.SparkConnectService/SparkgateHealthProbe";

  private static final MethodDescriptor<byte[], byte[]> PROBE =
      MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName(PROBE_METHOD)
          .setRequestMarshaller(Bytes.INSTANCE)
          .setResponseMarshaller(Bytes.INSTANCE)
          .build();

  /** What is known of one backend. */
  public enum State {
    /** Not probed yet: usable. */
    UNKNOWN,
    UP,
    DOWN
  }

  /**
   * Probes that must fail in a row before a backend counts as down: one slow answer from a busy server
   * must not take away the only backend of a pool. A call that cannot reach it at all marks it at once.
   */
  static final int FAILED_PROBES_TO_DOWN = 3;

  private record Seen(State state, long sinceNanos, String why) {}

  private final Map<String, Integer> failedProbes = new ConcurrentHashMap<>();

  private final Map<String, Seen> states = new ConcurrentHashMap<>();
  private final Function<String, Channel> channels;
  private final Consumer<String> reconnect;
  private final HealthConfig config;
  private final LongSupplier nanos;
  private volatile Collection<String> backends;

  /**
   * @param backends every backend of every pool, {@code host:port}
   * @param channels a channel to a backend (the proxy's own connections)
   * @param reconnect asks every connection to a backend to reconnect now, without waiting out its backoff
   */
  BackendHealth(
      Collection<String> backends,
      Function<String, Channel> channels,
      Consumer<String> reconnect,
      HealthConfig config,
      LongSupplier nanos) {
    this.channels = channels;
    this.reconnect = reconnect;
    this.config = config;
    this.nanos = nanos;
    backends(backends);
  }

  /**
   * The backends to watch from now on (after a reload), besides every one watched before: a backend a reload
   * drops from its pool may still hold placed sessions, whose clients must still be told when it is down.
   */
  void backends(Collection<String> backends) {
    for (String b : backends) {
      states.putIfAbsent(b, new Seen(State.UNKNOWN, nanos.getAsLong(), "not probed yet"));
    }
    this.backends = List.copyOf(states.keySet());
  }

  /** Watches {@code backend} too from now on, if it is not watched yet (an engine that has just started). */
  void watch(String backend) {
    if (states.containsKey(backend)) return;
    synchronized (this) {
      backends(List.of(backend));
    }
  }

  /** Stops watching {@code backend} (an engine that stopped: nothing will be placed on it again). */
  void forget(String backend) {
    synchronized (this) {
      if (states.remove(backend) == null) return;
      failedProbes.remove(backend);
      this.backends = List.copyOf(states.keySet());
    }
  }

  private volatile ScheduledExecutorService scheduler; // set by start

  /** Probes {@code backend} now, off the caller's thread (one that has just joined its pool). */
  void probeSoon(String backend) {
    ScheduledExecutorService s = scheduler;
    if (s == null || s.isShutdown()) return;
    try {
      s.execute(
          () -> {
            if (states.containsKey(backend)) probe(backend);
          });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // stopping
    }
  }

  /** Probes every backend now and every {@code health.interval}, on {@code scheduler}. */
  void start(ScheduledExecutorService scheduler) {
    this.scheduler = scheduler;
    long every = config.interval().toMillis();
    scheduler.scheduleWithFixedDelay(this::probeAll, 0, every, TimeUnit.MILLISECONDS);
  }

  void probeAll() {
    for (String backend : backends) {
      probe(backend);
    }
  }

  private void probe(String backend) {
    if (!usable(backend)) {
      reconnect.accept(backend);
    }
    ClientCall<byte[], byte[]> call =
        channels
            .apply(backend)
            .newCall(
                PROBE,
                CallOptions.DEFAULT.withDeadlineAfter(
                    config.timeout().toMillis(), TimeUnit.MILLISECONDS));
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onClose(Status status, Metadata trailers) {
            switch (status.getCode()) {
              case UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED -> {
                if (failedProbes.merge(backend, 1, Integer::sum) >= FAILED_PROBES_TO_DOWN) {
                  down(backend, "probe: " + status.getCode() + describe(status));
                }
              }
              default -> {
                failedProbes.remove(backend);
                up(backend);
              }
            }
          }
        },
        new Metadata());
    call.request(1);
    call.sendMessage(new byte[0]);
    call.halfClose();
  }

  private static String describe(Status status) {
    String reason = reason(status);
    return reason.isEmpty() ? "" : " (" + reason + ")";
  }

  /**
   * The status's description and, when the transport failed, its deepest cause: gRPC says only "io
   * exception" where the cause names the problem (a backend certificate not trusted, or not for the
   * server_name), which is what the operator needs in the log.
   */
  static String reason(Status status) {
    String description = status.getDescription() == null ? "" : status.getDescription();
    Throwable cause = status.getCause();
    if (cause == null) return description;
    while (cause.getCause() != null && cause.getCause() != cause) cause = cause.getCause();
    String message =
        cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
    return description.isEmpty() ? message : description + ": " + message;
  }

  /** A call could not reach {@code backend} (it answered UNAVAILABLE on the transport). */
  void failed(String backend, String why) {
    down(backend, why);
  }

  /** Whether new and placed sessions may go to {@code backend} now. */
  boolean usable(String backend) {
    Seen s = states.get(backend);
    return s == null || s.state != State.DOWN;
  }

  /** How long {@code backend} has been down; zero when it is not. */
  Duration downFor(String backend) {
    Seen s = states.get(backend);
    return s == null || s.state != State.DOWN
        ? Duration.ZERO
        : Duration.ofNanos(nanos.getAsLong() - s.sinceNanos);
  }

  /** Every watched backend's state, by address. */
  public Map<String, State> states() {
    Map<String, State> out = new TreeMap<>();
    states.forEach((b, s) -> out.put(b, s.state));
    return out;
  }

  private void up(String backend) {
    Seen before = states.get(backend);
    if (before == null || before.state == State.UP) return;
    if (states.replace(backend, before, new Seen(State.UP, nanos.getAsLong(), ""))
        && before.state == State.DOWN) {
      reconnect.accept(backend);
      log.info(
          "backend {} is up again (down for {} s)",
          backend,
          (nanos.getAsLong() - before.sinceNanos) / 1_000_000_000L);
    }
  }

  private void down(String backend, String why) {
    Seen before = states.get(backend);
    if (before == null || before.state == State.DOWN) return;
    if (states.replace(backend, before, new Seen(State.DOWN, nanos.getAsLong(), why))) {
      log.warn("backend {} is down: {}", backend, why);
    }
  }

  @Override
  public void close() {}

  /** Probe messages: empty bytes both ways. */
  private enum Bytes implements MethodDescriptor.Marshaller<byte[]> {
    INSTANCE;

    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try (stream) {
        return stream.readAllBytes();
      } catch (java.io.IOException e) {
        throw new IllegalStateException(e);
      }
    }
  }
}
