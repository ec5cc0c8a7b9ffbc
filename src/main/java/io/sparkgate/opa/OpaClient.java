package io.sparkgate.opa;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.sparkgate.config.OpaConfig;
import io.sparkgate.config.Secret;
import io.sparkgate.tls.ClientTls;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Asks OPA's Data API ({@code POST /v1/data/<path>}) and remembers its decisions. One question is one bounded
 * wait (the configured timeout, connecting included): the caller's thread blocks, so callers run it off the
 * event loops. Only decisions are cached, keyed by the SHA-256 of the canonical input document; an error is
 * asked again next time. Thread-safe.
 */
public final class OpaClient implements AutoCloseable {
  private final InputDocument input;
  private final URI url;
  private final Optional<Secret> token;
  private final Duration timeout;
  private final ExecutorService executor;
  private final HttpClient http;
  private final Cache<ByteBuffer, Answer> cache;
  private final LongAdder hits = new LongAdder();
  private final LongAdder asked = new LongAdder();
  private final LongAdder errors = new LongAdder();

  public OpaClient(OpaConfig config, InputDocument input) {
    this(config, input, Ticker.systemTicker());
  }

  OpaClient(OpaConfig config, InputDocument input, Ticker ticker) {
    this.input = input;
    this.url = config.decisionUrl();
    this.token = config.token();
    this.timeout = config.timeout();
    AtomicInteger n = new AtomicInteger();
    this.executor =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "sparkgate-opa-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    HttpClient.Builder b =
        HttpClient.newBuilder()
            // HTTP/1.1 with keep-alive: no h2c upgrade round trip on plaintext, and OPA serves it.
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(timeout)
            .followRedirects(HttpClient.Redirect.NEVER)
            .executor(executor);
    if (config.url().getScheme().equalsIgnoreCase("https")) {
      try {
        b.sslContext(ClientTls.context(config.caFile(), Optional.empty(), Optional.empty()));
      } catch (ClientTls.ClientTlsException e) {
        throw new IllegalArgumentException("policy.opa.ca_file: " + e.getMessage(), e);
      }
    }
    this.http = b.build();
    this.cache =
        config.cacheEntries() == 0
            ? null
            : Caffeine.newBuilder()
                .maximumSize(config.cacheEntries())
                .expireAfterWrite(config.cacheTtl())
                .ticker(ticker)
                .build();
  }

  /** OPA's decision on {@code q}; never throws: what goes wrong is an {@link Answer.Outcome#ERROR}. */
  public Answer ask(Question q) {
    byte[] body = input.request(q);
    ByteBuffer key = cache == null ? null : ByteBuffer.wrap(sha256(body));
    if (key != null) {
      Answer known = cache.getIfPresent(key);
      if (known != null) {
        hits.increment();
        return known.fromCache();
      }
    }
    asked.increment();
    Answer a = post(body);
    if (a.outcome() == Answer.Outcome.ERROR) {
      errors.increment();
    } else if (key != null) {
      cache.put(key, a);
    }
    return a;
  }

  private Answer post(byte[] body) {
    HttpRequest.Builder r =
        HttpRequest.newBuilder(url)
            .timeout(timeout)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    token.ifPresent(t -> r.header("Authorization", "Bearer " + t.reveal()));
    CompletableFuture<HttpResponse<byte[]>> sent;
    try {
      sent = http.sendAsync(r.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (RuntimeException e) { // closed: the executor refuses
      return Answer.error("asking OPA failed: " + e);
    }
    HttpResponse<byte[]> response;
    try {
      // The request's own timeout stops at the response's headers; this bounds the body too.
      response = sent.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      sent.cancel(true);
      return Answer.error("OPA did not answer within " + timeout.toMillis() + "ms");
    } catch (InterruptedException e) {
      sent.cancel(true);
      Thread.currentThread().interrupt();
      return Answer.error("interrupted while waiting for OPA");
    } catch (ExecutionException e) {
      return Answer.error(failure(e.getCause()));
    }
    if (response.statusCode() != 200) {
      String text = new String(response.body(), StandardCharsets.UTF_8).strip();
      return Answer.error(
          "OPA answered HTTP "
              + response.statusCode()
              + (text.isEmpty()
                  ? ""
                  : ": " + (text.length() > 300 ? text.substring(0, 300) : text)));
    }
    return AnswerParser.parse(response.body());
  }

  private String failure(Throwable cause) {
    if (cause instanceof HttpTimeoutException) {
      return "OPA did not answer within " + timeout.toMillis() + "ms";
    }
    if (cause instanceof ConnectException) {
      return "cannot connect to OPA at " + url.getHost() + ":" + url.getPort() + ": " + cause;
    }
    if (cause instanceof IOException) return "asking OPA failed: " + cause;
    return "asking OPA failed unexpectedly: " + cause;
  }

  private static byte[] sha256(byte[] body) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(body);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }

  /** Questions answered from the cache. */
  public long cacheHits() {
    return hits.sum();
  }

  /** Questions sent to OPA. */
  public long asked() {
    return asked.sum();
  }

  /** Questions OPA gave no usable answer to. */
  public long errors() {
    return errors.sum();
  }

  /** Stops the client's threads; a question asked after gets an error. */
  @Override
  public void close() {
    executor.shutdownNow();
    if (cache != null) cache.invalidateAll();
  }
}
