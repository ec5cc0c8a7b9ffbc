package io.sparkgate.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.Attributes;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * Remembers verified JWTs so that the signature is checked once per token, not once per call (a Spark
 * session makes many calls: every ReleaseExecute, every AddArtifacts chunk). Keyed by the token's SHA-256,
 * bounded, and each entry expires at the token's {@code exp} or after {@code max_age}, whichever is first:
 * max_age bounds how long a key removed from the JWKS still covers the tokens it signed.
 *
 * <p>Each client connection also remembers the last token verified on it ({@link LastToken}): a connection's
 * calls nearly always carry one token, and comparing its digest costs less than the cache's lookup and the
 * bookkeeping that every read of a bounded Caffeine cache brings. The connection's entry expires when the
 * cache's entry does.
 */
final class TokenCache {
  /** Verifies a token that is not in the cache. */
  @FunctionalInterface
  interface Verifier {
    JwtVerifier.Verified verify(String token) throws AuthFailure;
  }

  /**
   * The last token verified on one client connection (a transport attribute: {@link #KEY}), by digest, never
   * the token itself. Calls of one connection may run on different threads; an entry is replaced whole.
   */
  static final class LastToken {
    static final Attributes.Key<LastToken> KEY = Attributes.Key.create("sparkgate-last-token");

    private volatile Entry entry;
  }

  /** A verified token's digest, and the ticker's time at which its cache entry expires. */
  private record Entry(byte[] digest, JwtVerifier.Verified verified, long expiresAt) {}

  private final Cache<String, JwtVerifier.Verified> cache;
  private final Clock clock;
  private final Ticker ticker;
  private final Duration maxAge;

  TokenCache(int maxEntries, Duration maxAge, Clock clock, Ticker ticker) {
    this.clock = clock;
    this.ticker = ticker;
    this.maxAge = maxAge;
    this.cache =
        maxEntries == 0 || maxAge.isZero()
            ? null
            : Caffeine.newBuilder()
                .maximumSize(maxEntries)
                .ticker(ticker)
                .expireAfter(new UntilExp())
                // Maintenance is a few map operations: cheaper on the caller than waking a
                // common-pool thread.
                .executor(Runnable::run)
                .build();
  }

  /** The verified token, from the cache or {@code verifier}, trying the connection's last token first ({@code last} may be null). */
  JwtVerifier.Verified get(String token, Verifier verifier, LastToken last) throws AuthFailure {
    if (cache == null) {
      return verifier.verify(token);
    }
    byte[] digest = Hashes.sha256(token);
    Entry e = last == null ? null : last.entry;
    // Constant time, like a lookup by digest: nothing about a stored token leaks through the
    // comparison.
    if (e != null
        && MessageDigest.isEqual(e.digest(), digest)
        && ticker.read() - e.expiresAt() < 0
        && clock.instant().isBefore(e.verified().expires())) {
      return e.verified();
    }
    String key = HexFormat.of().formatHex(digest);
    JwtVerifier.Verified hit = cache.getIfPresent(key);
    // The ticker drives eviction; the wall clock is checked too, so a jump forward never serves a
    // dead token.
    JwtVerifier.Verified verified =
        hit != null && clock.instant().isBefore(hit.expires()) ? hit : null;
    if (verified == null) {
      verified = verifier.verify(token);
      cache.put(key, verified);
    }
    if (last != null) {
      remember(last, key, digest, verified);
    }
    return verified;
  }

  /** The connection's entry, until its cache entry's end (already gone: not remembered). */
  private void remember(LastToken last, String key, byte[] digest, JwtVerifier.Verified verified) {
    long left =
        cache
            .policy()
            .expireVariably()
            .orElseThrow()
            .getExpiresAfter(key, TimeUnit.NANOSECONDS)
            .orElse(0);
    last.entry = left > 0 ? new Entry(digest, verified, ticker.read() + left) : null;
  }

  long size() {
    if (cache == null) {
      return 0;
    }
    cache.cleanUp();
    return cache.estimatedSize();
  }

  private final class UntilExp implements Expiry<String, JwtVerifier.Verified> {
    @Override
    public long expireAfterCreate(String key, JwtVerifier.Verified value, long currentTime) {
      Duration untilExp = Duration.between(clock.instant(), value.expires());
      Duration d = untilExp.compareTo(maxAge) < 0 ? untilExp : maxAge;
      return d.isNegative() ? 0 : d.toNanos();
    }

    @Override
    public long expireAfterUpdate(
        String key, JwtVerifier.Verified value, long currentTime, long currentDuration) {
      return expireAfterCreate(key, value, currentTime);
    }

    @Override
    public long expireAfterRead(
        String key, JwtVerifier.Verified value, long currentTime, long currentDuration) {
      return currentDuration;
    }
  }
}
