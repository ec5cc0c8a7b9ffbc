package io.sparkgate.engine;

import io.grpc.Channel;
import io.grpc.StatusException;
import io.sparkgate.admin.EngineControl;
import io.sparkgate.call.Principal;
import io.sparkgate.config.EnginesConfig;
import io.sparkgate.config.PoolConfig;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.redis.Redis;
import io.sparkgate.route.OnDemandBackends;
import io.sparkgate.route.SessionKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every engine pool of this replica: what the router asks ({@link OnDemandBackends}), what the admin API
 * lists and stops ({@link EngineControl}), and the lifecycle thread. Closing it stops the engines this
 * replica owns; those of other replicas run on.
 */
public final class Engines implements OnDemandBackends, EngineControl, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Engines.class);
  private static final long TICK_MILLIS = 500;

  private final Map<String, EnginePool> pools;
  private final ScheduledExecutorService lifecycle;
  private final ExecutorService background;

  private Engines(
      Map<String, EnginePool> pools,
      ScheduledExecutorService lifecycle,
      ExecutorService background) {
    this.pools = pools;
    this.lifecycle = lifecycle;
    this.background = background;
  }

  /** Whether {@code config} has a pool of engines. */
  public static boolean any(ProxyConfig config) {
    return config.pools().values().stream().anyMatch(p -> p.engines().isPresent());
  }

  /**
   * Starts the lifecycle of {@code config}'s engine pools (warm engines start now).
   *
   * @param redis the shared directory with {@code sessions.store: redis}; null: this replica alone
   * @param replica this replica's name, stable across its restarts (its engines are found again by it)
   * @param register sends an engine's token on calls to its address; {@code unregister} stops
   * @param audit where engine records go; null: audit off
   */
  public static Engines start(
      ProxyConfig config,
      Redis redis,
      String replica,
      BiConsumer<String, String> register,
      Consumer<String> unregister,
      Function<String, Channel> channels,
      Consumer<Map<String, Object>> audit) {
    ExecutorService background = Executors.newCachedThreadPool(daemons("sparkgate-engine-stop"));
    EngineDirectory directory = redis == null ? new MemoryDirectory() : new RedisDirectory(redis);
    Map<String, EnginePool> pools = new LinkedHashMap<>();
    for (PoolConfig pool : config.pools().values()) {
      if (pool.engines().isEmpty()) continue;
      EnginesConfig engines = pool.engines().get();
      Path logDir = logDir(engines, pool.name());
      EngineSupport support =
          new EngineSupport(
              directory,
              replica,
              host(),
              logDir,
              register,
              unregister,
              channels,
              audit,
              Clock.systemUTC(),
              background);
      pools.put(
          pool.name(), new EnginePool(pool.name(), engines, new SparkSubmit(engines), support));
    }
    ScheduledExecutorService lifecycle =
        Executors.newSingleThreadScheduledExecutor(daemons("sparkgate-engines"));
    Engines started = new Engines(Map.copyOf(pools), lifecycle, background);
    lifecycle.scheduleWithFixedDelay(started::tick, 0, TICK_MILLIS, TimeUnit.MILLISECONDS);
    return started;
  }

  private static java.util.concurrent.ThreadFactory daemons(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  private static Path logDir(EnginesConfig engines, String pool) {
    Path dir =
        engines
            .logDir()
            .orElse(Path.of(System.getProperty("java.io.tmpdir"), "sparkgate-engines", pool));
    try {
      Files.createDirectories(dir);
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the engines' log directory " + dir, e);
    }
  }

  /** This host's name, as engine records name where their process runs. */
  private static String host() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "localhost";
    }
  }

  private void tick() {
    for (EnginePool pool : pools.values()) {
      try {
        pool.tick();
      } catch (RuntimeException e) {
        log.warn("engine pool {}: lifecycle check failed: {}", pool.name(), e.toString());
      }
    }
  }

  @Override
  public boolean serves(String pool) {
    return pools.containsKey(pool);
  }

  @Override
  public boolean mayBlock(String pool, Principal principal) {
    return principal != null && pools.get(pool).mayBlock(principal);
  }

  @Override
  public String backendFor(String pool, Principal principal) throws StatusException {
    return pools.get(pool).backendFor(principal);
  }

  @Override
  public boolean running(String pool, String address) {
    return pools.get(pool).running(address);
  }

  @Override
  public void used(String pool, String address, SessionKey newSession) {
    try {
      pools
          .get(pool)
          .used(
              address,
              newSession == null ? null : newSession.userId(),
              newSession == null ? null : newSession.sessionId());
    } catch (RuntimeException e) {
      log.debug("engine pool {}: could not record a use of {}: {}", pool, address, e.toString());
    }
  }

  @Override
  public void finished(String pool, String address) {
    pools.get(pool).finished(address);
  }

  @Override
  public List<Map<String, Object>> list() {
    List<Map<String, Object>> out = new ArrayList<>();
    pools.values().forEach(p -> out.addAll(p.list()));
    return out;
  }

  @Override
  public boolean stop(String pool, String key, String operator) {
    EnginePool p = pools.get(pool);
    EngineKey k = EngineKey.parse(key);
    return p != null && k != null && p.stop(k, operator);
  }

  /** Engines this replica holds, by pool and state. */
  public Map<String, Map<String, Integer>> states() {
    Map<String, Map<String, Integer>> out = new LinkedHashMap<>();
    pools.forEach((name, p) -> out.put(name, p.states()));
    return out;
  }

  public List<String> poolNames() {
    return List.copyOf(pools.keySet());
  }

  /** Engines launched by this replica in {@code pool} since start. */
  public long starts(String pool) {
    return pools.get(pool).starts();
  }

  /** Launches in {@code pool} that failed (could not start, exited, or were not serving in time). */
  public long failures(String pool) {
    return pools.get(pool).failures();
  }

  /** Engines of {@code pool} that came to serve, and the seconds their starts took in all. */
  public long started(String pool) {
    return pools.get(pool).readyCount();
  }

  public double startSeconds(String pool) {
    return pools.get(pool).startSeconds();
  }

  @Override
  public void close() {
    lifecycle.shutdownNow();
    try {
      lifecycle.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    pools.values().forEach(EnginePool::close);
    background.shutdown();
    try {
      background.awaitTermination(25, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
