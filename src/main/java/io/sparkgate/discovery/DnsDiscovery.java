package io.sparkgate.discovery;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.MethodDescriptor;
import io.sparkgate.config.DnsBackendConfig;
import io.sparkgate.config.PoolConfig;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.Backends;
import io.sparkgate.route.Router;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code dns:} entries of every pool, each asked again every {@code refresh} on a thread of its own
 * (lookups block; the event loops never wait on DNS). Each change of a pool's answer is handed on in order:
 * the new backends' settings to {@link Backends} first, so a call routed there is made as configured, then the
 * pool's members to the {@link Router}; the channels of those that left close once their calls end.
 */
public final class DnsDiscovery implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DnsDiscovery.class);

  /** Where a profile read goes while a pool has no backend yet: the discard port, which fails at once. */
  private static final String NO_SERVER = "127.0.0.1:9";

  private final Map<String, List<DnsWatch>> byPool;
  private final Backends backends;
  private final Router router;
  private final ScheduledExecutorService scheduler;
  private final Duration keepLeft;

  /** Each pool's members as last handed to the router; discovery thread only. */
  private final Map<String, Set<String>> applied = new HashMap<>();

  /** Backends that left, with when (System.nanoTime): their settings are dropped after keepLeft. */
  private final Map<String, Long> leftAt = new ConcurrentHashMap<>();

  private DnsDiscovery(
      Map<String, List<DnsWatch>> byPool,
      Backends backends,
      Router router,
      ScheduledExecutorService scheduler,
      Duration keepLeft) {
    this.byPool = byPool;
    this.backends = backends;
    this.router = router;
    this.scheduler = scheduler;
    this.keepLeft = keepLeft;
  }

  /** Starts asking DNS for every {@code dns:} entry of {@code config}; null when there is none. */
  public static DnsDiscovery start(ProxyConfig config, Backends backends, Router router) {
    return start(config, backends, router, new JndiDnsLookup());
  }

  static DnsDiscovery start(
      ProxyConfig config, Backends backends, Router router, DnsLookup lookup) {
    Map<String, List<DnsWatch>> byPool = new LinkedHashMap<>();
    for (PoolConfig pool : config.pools().values()) {
      for (DnsBackendConfig entry : pool.dns()) {
        byPool
            .computeIfAbsent(pool.name(), p -> new ArrayList<>())
            .add(new DnsWatch(pool.name(), entry, lookup, Clock.systemUTC()));
        if (entry.backend().plaintextBeyondLoopback()) {
          log.warn(
              "the backends DNS finds for pool {} ({}) are reached in plaintext: set tls on the entry"
                  + " unless the network itself encrypts; its token and every query cross it as written",
              pool.name(),
              entry);
        }
      }
    }
    if (byPool.isEmpty()) return null;
    ScheduledExecutorService scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sparkgate-dns");
              t.setDaemon(true);
              return t;
            });
    Duration keepLeft =
        config.sessions().idleTimeout().compareTo(config.health().sessionLostAfter()) >= 0
            ? config.sessions().idleTimeout()
            : config.health().sessionLostAfter();
    DnsDiscovery discovery =
        new DnsDiscovery(Map.copyOf(byPool), backends, router, scheduler, keepLeft);
    byPool.forEach(
        (pool, watches) -> {
          router.explainEmpty(pool, () -> discovery.status(pool));
          for (DnsWatch w : watches) {
            long every = w.entry().refresh().toMillis();
            scheduler.scheduleWithFixedDelay(
                () -> discovery.refresh(w), 0, every, TimeUnit.MILLISECONDS);
          }
        });
    scheduler.scheduleWithFixedDelay(discovery::dropLongGone, 1, 1, TimeUnit.MINUTES);
    return discovery;
  }

  /** Asks DNS for one entry and hands a changed answer on; on the discovery thread. */
  private void refresh(DnsWatch watch) {
    try {
      watch.refresh();
      apply(watch.pool());
    } catch (RuntimeException e) {
      log.error("DNS discovery for pool {} failed", watch.pool(), e);
    }
  }

  private void apply(String pool) {
    Set<String> members = new TreeSet<>();
    for (DnsWatch w : byPool.get(pool)) {
      for (String address : w.answer()) {
        if (members.add(address)) {
          int colon = address.lastIndexOf(':');
          String host = address.substring(0, colon);
          if (host.startsWith("[")) host = host.substring(1, host.length() - 1);
          backends.found(pool, w.entry(), host, Integer.parseInt(address.substring(colon + 1)));
        }
      }
    }
    if (members.equals(applied.get(pool))) return;
    applied.put(pool, members);
    members.forEach(leftAt::remove);
    long now = System.nanoTime();
    for (String gone : router.discovered(pool, members)) {
      backends.left(gone);
      leftAt.put(gone, now);
    }
  }

  /** Forgets the settings of backends that left longer ago than any placement on them is kept. */
  private void dropLongGone() {
    long now = System.nanoTime();
    leftAt.forEach(
        (address, since) -> {
          if (now - since > keepLeft.toNanos() && leftAt.remove(address, since)) {
            backends.drop(address);
          }
        });
  }

  /** The pools with {@code dns:} entries. */
  public List<String> pools() {
    return List.copyOf(byPool.keySet());
  }

  /** Lookups for {@code pool}'s entries that ended as {@code result} ({@code ok}, {@code empty}, {@code error}). */
  public long lookups(String pool, String result) {
    DnsWatch.Result r = DnsWatch.Result.valueOf(result.toUpperCase(java.util.Locale.ROOT));
    return byPool.getOrDefault(pool, List.of()).stream().mapToLong(w -> w.count(r)).sum();
  }

  /** The lookup results the metrics count. */
  public static List<String> results() {
    List<String> out = new ArrayList<>();
    for (DnsWatch.Result r : DnsWatch.Result.values()) {
      out.add(r.name().toLowerCase(java.util.Locale.ROOT));
    }
    return out;
  }

  /** The backends DNS names for {@code pool} now (the last good answers). */
  public int backends(String pool) {
    Set<String> all = new TreeSet<>();
    byPool.getOrDefault(pool, List.of()).forEach(w -> all.addAll(w.answer()));
    return all.size();
  }

  /** Where {@code pool}'s entries stand, one clause each. */
  public String status(String pool) {
    return byPool.getOrDefault(pool, List.of()).stream()
        .map(w -> "dns " + w.status())
        .collect(Collectors.joining("; "));
  }

  /**
   * What readiness shows beside its checks: each pool's DNS, with failures (a failing DNS keeps the last answer
   * and does not fail readiness; a pool left without backends fails the backends check).
   */
  public String detail() {
    boolean failing = byPool.values().stream().flatMap(List::stream).anyMatch(DnsWatch::failing);
    return (failing ? "failing, last answers kept: " : "ok: ")
        + byPool.keySet().stream()
            .map(p -> "pool " + p + ": " + status(p))
            .collect(Collectors.joining("; "));
  }

  /**
   * A channel to one backend of {@code pool} that serves (the first not seen down), chosen again for each
   * call: how the profiler asks a pool whose backends DNS finds. Before there is one, calls fail UNAVAILABLE,
   * and the profiler retries.
   */
  public Channel anyBackend(String pool) {
    return new Channel() {
      @Override
      public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        String target = NO_SERVER;
        for (var e : router.backendsByPool().getOrDefault(pool, Map.of()).entrySet()) {
          if (!"down".equals(e.getValue())) {
            target = e.getKey();
            break;
          }
        }
        return backends.channel(target).newCall(method, options);
      }

      @Override
      public String authority() {
        return pool + ".dns.sparkgate";
      }
    };
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
  }
}
