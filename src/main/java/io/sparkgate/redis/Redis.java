package io.sparkgate.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.sparkgate.config.SessionsConfig;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
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

  /**
   * How long Redis may be back before we notice. Lettuce's default backoff grows to 30 s, so a proxy kept
   * refusing sessions for up to 30 s after a Redis restart; one attempt a second costs nothing.
   */
  private static final Duration RETRY = Duration.ofSeconds(1);

  private final ClientResources resources;
  private final RedisClient client;
  private final RedisURI uri;
  private final Duration timeout;
  private final String where; // host:port, for messages: never the password
  private final AtomicLong errors = new AtomicLong();
  private final AtomicLong failedAttempts = new AtomicLong();
  private volatile StatefulRedisConnection<String, String> connection;
  private volatile boolean closed;

  private Redis(ClientResources resources, RedisURI uri, Duration timeout, String where) {
    this.resources = resources;
    this.client = RedisClient.create(resources, uri);
    this.uri = uri;
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
    RedisURI built = uri.build();
    ClientResources resources =
        DefaultClientResources.builder()
            .reconnectDelay(Delay.exponential(Duration.ZERO, RETRY, 2, TimeUnit.MILLISECONDS))
            .build();
    Redis redis =
        new Redis(resources, built, sessions.redisTimeout(), url.getHost() + ":" + built.getPort());
    redis.client.setOptions(
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
    // Wait for the first attempt, so that a proxy whose Redis is up starts connected. Not for our
    // timeout only: a cold JVM takes longer than that to load Netty, and the attempt is bounded by
    // the connect timeout and the handshake's. Failing is fine: attempts go on in the background.
    try {
      redis.attempt().get();
    } catch (ExecutionException e) {
      // logged by attempt()
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return redis;
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
   * Runs a command and waits for it, at most {@code sessions.redis_timeout}.
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
      throw failed(e);
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
      return CompletableFuture.failedFuture(failed(e));
    }
  }

  /**
   * The connection, never waiting for one: until the first attempt succeeds, commands fail at once, as Lettuce
   * rejects them while it reconnects, so neither {@link #call} nor {@link #send} waits longer than a command.
   */
  private StatefulRedisConnection<String, String> connection() {
    StatefulRedisConnection<String, String> c = connection;
    if (c == null) throw new RedisUnavailableException("Redis at " + where + " is not connected");
    return c;
  }

  /**
   * One attempt to connect; when it fails, another a second later, until one succeeds. Lettuce reconnects a
   * connection it once had, but does not retry the first: without this, a proxy started while Redis was down
   * would only connect if traffic came, and it is not ready, so none comes.
   */
  private CompletableFuture<StatefulRedisConnection<String, String>> attempt() {
    CompletableFuture<StatefulRedisConnection<String, String>> a =
        client.connectAsync(StringCodec.UTF8, uri).toCompletableFuture();
    return a.whenComplete(
        (c, e) -> {
          if (c != null) {
            connected(c);
          } else if (!closed) {
            long n = failedAttempts.incrementAndGet();
            // Once a second would flood the log: the first failure, then once a minute.
            if (n == 1 || n % 60 == 0) {
              log.warn(
                  "cannot connect to Redis at {} ({} attempts, one a second): {}",
                  where,
                  n,
                  e.toString());
            }
            retry();
          }
        });
  }

  private void connected(StatefulRedisConnection<String, String> c) {
    if (closed) {
      CompletableFuture<Void> unused = c.closeAsync();
      return;
    }
    connection = c;
    log.info("connected to Redis at {}", where);
  }

  private void retry() {
    try {
      Future<?> unused =
          resources
              .eventExecutorGroup()
              .schedule(this::retryNow, RETRY.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // closing
    }
  }

  private void retryNow() {
    if (!closed) {
      CompletableFuture<?> unused = attempt(); // it retries on its own
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
    closed = true;
    StatefulRedisConnection<String, String> c = connection;
    if (c != null) c.close();
    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(2, TimeUnit.SECONDS);
  }
}
