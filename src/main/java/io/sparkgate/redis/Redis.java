package io.sparkgate.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.sparkgate.config.SessionsConfig;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Redis connection for the whole proxy. Commands are pipelined on it by Lettuce; while Redis is away
 * they fail at once ({@link RedisUnavailableException}) and the connection comes back by itself. A proxy
 * started while Redis is down starts anyway (it is then not ready) and connects as soon as Redis answers.
 */
public final class Redis implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Redis.class);
  private static final long RETRY_CONNECT_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final RedisClient client;
  private final Duration timeout;
  private final String where; // host:port, for messages: never the password
  private final AtomicLong errors = new AtomicLong();
  private final Object connecting = new Object();
  private volatile StatefulRedisConnection<String, String> connection;
  private volatile long lastAttempt = System.nanoTime() - RETRY_CONNECT_NANOS;

  private Redis(RedisClient client, Duration timeout, String where) {
    this.client = client;
    this.timeout = timeout;
    this.where = where;
  }

  /** Connects as {@code sessions} says (store: redis); does not fail when Redis is not up yet. */
  public static Redis connect(SessionsConfig sessions) {
    URI url = sessions.redisUrl().orElseThrow(() -> new IllegalArgumentException("no redis_url"));
    RedisURI.Builder uri =
        RedisURI.builder()
            .withHost(url.getHost())
            .withPort(url.getPort() < 0 ? RedisURI.DEFAULT_REDIS_PORT : url.getPort())
            .withSsl("rediss".equals(url.getScheme()))
            .withTimeout(sessions.redisTimeout());
    String path = url.getPath() == null ? "" : url.getPath().replace("/", "");
    if (!path.isEmpty()) {
      try {
        uri.withDatabase(Integer.parseInt(path));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("redis_url: the path must be a database number", e);
      }
    }
    sessions.redisPassword().ifPresent(p -> uri.withPassword(p.reveal().toCharArray()));
    RedisClient client = RedisClient.create(uri.build());
    client.setOptions(
        ClientOptions.builder()
            .autoReconnect(true)
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            .timeoutOptions(TimeoutOptions.enabled(sessions.redisTimeout()))
            .socketOptions(
                SocketOptions.builder()
                    .connectTimeout(sessions.redisTimeout())
                    .keepAlive(true)
                    .build())
            .build());
    Redis redis =
        new Redis(client, sessions.redisTimeout(), url.getHost() + ":" + uri.build().getPort());
    redis.connection(); // try once now; failing is fine, the first use tries again
    return redis;
  }

  /** How long one command may take. */
  public Duration timeout() {
    return timeout;
  }

  /** Commands that failed (Redis down, timed out, refused) since start. */
  public long errors() {
    return errors.get();
  }

  /** Whether the connection is up now. */
  public boolean up() {
    StatefulRedisConnection<String, String> c = connection;
    return c != null && c.isOpen();
  }

  /**
   * Runs a command and waits for it, at most {@link #timeout()}.
   *
   * @throws RedisUnavailableException when Redis did not answer in time or is not connected
   */
  public <T> T call(Function<RedisAsyncCommands<String, String>, CompletionStage<T>> command) {
    try {
      return command
          .apply(connection().async())
          .toCompletableFuture()
          .get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw failed(e);
    } catch (ExecutionException e) {
      throw failed(e.getCause());
    } catch (TimeoutException | RuntimeException e) {
      throw e instanceof RedisUnavailableException r ? r : failed(e);
    }
  }

  /** Runs a command without waiting; a failure is counted and logged, never thrown. */
  public <T> CompletableFuture<T> send(
      Function<RedisAsyncCommands<String, String>, CompletionStage<T>> command) {
    try {
      return command
          .apply(connection().async())
          .toCompletableFuture()
          .whenComplete(
              (v, e) -> {
                if (e != null) failed(e);
              });
    } catch (RuntimeException e) {
      RedisUnavailableException f = e instanceof RedisUnavailableException r ? r : failed(e);
      return CompletableFuture.failedFuture(f);
    }
  }

  private StatefulRedisConnection<String, String> connection() {
    StatefulRedisConnection<String, String> c = connection;
    if (c != null) return c;
    synchronized (connecting) {
      if (connection != null) return connection;
      long now = System.nanoTime();
      if (now - lastAttempt < RETRY_CONNECT_NANOS) {
        throw new RedisUnavailableException("Redis at " + where + " is not connected");
      }
      lastAttempt = now;
      try {
        connection = client.connect();
        log.info("connected to Redis at {}", where);
        return connection;
      } catch (RuntimeException e) {
        throw failed(e);
      }
    }
  }

  private RedisUnavailableException failed(Throwable e) {
    long n = errors.incrementAndGet();
    // One line per failure would flood the log while Redis is down: the first and every 1000th.
    if (n == 1 || n % 1000 == 0) {
      log.warn("Redis at {} failed ({} failures so far): {}", where, n, e.toString());
    }
    return e instanceof RedisUnavailableException r
        ? r
        : new RedisUnavailableException("Redis at " + where + " failed: " + e.getMessage(), e);
  }

  @Override
  public void close() {
    StatefulRedisConnection<String, String> c = connection;
    if (c != null) c.close();
    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
  }
}
