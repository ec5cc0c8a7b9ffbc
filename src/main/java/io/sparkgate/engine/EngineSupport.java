package io.sparkgate.engine;

import io.grpc.Channel;
import io.sparkgate.admin.SparkActions;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every engine pool of a replica shares: the directory, this replica's name and host, the backends'
 * tokens, channels to release sessions over, the audit log, and a thread for slow stops.
 */
final class EngineSupport {
  private static final Logger log = LoggerFactory.getLogger(EngineSupport.class);

  private final EngineDirectory directory;
  private final String replica;
  private final String host;
  private final Path logDir;
  private final BiConsumer<String, String> register;
  private final Consumer<String> unregister;
  private final Function<String, Channel> channels;
  private final Consumer<Map<String, Object>> audit; // null: audit off
  private final Clock clock;
  private final ExecutorService background;

  EngineSupport(
      EngineDirectory directory,
      String replica,
      String host,
      Path logDir,
      BiConsumer<String, String> register,
      Consumer<String> unregister,
      Function<String, Channel> channels,
      Consumer<Map<String, Object>> audit,
      Clock clock,
      ExecutorService background) {
    this.directory = directory;
    this.replica = replica;
    this.host = host;
    this.logDir = logDir;
    this.register = register;
    this.unregister = unregister;
    this.channels = channels;
    this.audit = audit;
    this.clock = clock;
    this.background = background;
  }

  EngineDirectory directory() {
    return directory;
  }

  String replica() {
    return replica;
  }

  String host() {
    return host;
  }

  Path logDir() {
    return logDir;
  }

  long nowMillis() {
    return clock.millis();
  }

  void register(String address, String token) {
    register.accept(address, token);
  }

  void unregister(String address) {
    unregister.accept(address);
  }

  void release(String address, String userId, String sessionId) {
    SparkActions.release(channels.apply(address), userId, sessionId);
  }

  /** Runs a first query on a new engine (see {@link SparkActions#warmUp}). */
  void warmUp(String address, long timeoutMillis) {
    SparkActions.warmUp(channels.apply(address), WARM_UP_USER, WARM_UP_SQL, timeoutMillis);
  }

  /** Who the warm-up query runs as, and what it is: the engine's own first query, no user's data. */
  static final String WARM_UP_USER = "sparkgate";

  static final String WARM_UP_SQL = "SELECT 1";

  void background(Runnable task) {
    background.execute(task);
  }

  void event(String action, EnginePool pool, Engine e, String reason, Duration took) {
    event(action, pool, e, reason, took, null);
  }

  /** Logs an engine's start, readiness, adoption or stop and writes its audit record. */
  void event(
      String action, EnginePool pool, Engine e, String reason, Duration took, String operator) {
    String key = e.key == null ? "(warm)" : e.key.id();
    log.info(
        "{} pool {} {} {} at {}{}{}",
        action,
        pool.name(),
        key,
        e.id,
        e.address,
        reason == null ? "" : ": " + reason,
        took == null ? "" : " (" + took.toMillis() + " ms)");
    if (audit == null) return;
    Map<String, Object> record = new LinkedHashMap<>();
    record.put("time", clock.instant().toString());
    record.put("request_id", UUID.randomUUID().toString());
    record.put("rpc", "engine");
    record.put("action", action);
    if (operator != null) record.put("operator", operator);
    record.put("pool", pool.name());
    record.put("engine", key);
    record.put("engine_id", e.id);
    record.put("address", e.address);
    record.put("replica", replica);
    if (reason != null) record.put("reason", reason);
    if (took != null) record.put("duration_ms", took.toMillis());
    record.put("outcome", action.equals("engine-failed") ? "failed" : "ok");
    audit.accept(record);
  }
}
