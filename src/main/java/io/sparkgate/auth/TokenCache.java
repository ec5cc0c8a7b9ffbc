package io.sparkgate.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Clock;
import java.time.Duration;

/**
 * Remembers verified JWTs so that the signature is checked once per token, not once per call (a Spark
 * session makes many calls: every ReleaseExecute, every AddArtifacts chunk). Keyed by the token's SHA-256,
 * bounded, and each entry expires at the token's {@code exp} or after {@code max_age}, whichever is first:
 * max_age bounds how long a key removed from the JWKS still covers the tokens it signed.
 */
final class TokenCache {
  /** Verifies a token that is not in the cache. */
  @FunctionalInterface
  interface Verifier {
    JwtVerifier.Verified verify(String token) throws AuthFailure;
  }

  private final Cache<String, JwtVerifier.Verified> cache;
  private final Clock clock;
  private final Duration maxAge;

  TokenCache(int maxEntries, Duration maxAge, Clock clock, Ticker ticker) {
    this.clock = clock;
    this.maxAge = maxAge;
    this.cache =
        maxEntries == 0 || maxAge.isZero()
            ? null
            : Caffeine.newBuilder().maximumSize(maxEntries).ticker(ticker).expireAfter(new UntilExp())
                // Maintenance is a few map operations: cheaper on the caller than waking a common-pool thread.
                .executor(Runnable::run)
                .build();
  }

  JwtVerifier.Verified get(String token, Verifier verifier) throws AuthFailure {
    if (cache == null) {
      return verifier.verify(token);
    }
    String key = Hashes.sha256Hex(token);
    JwtVerifier.Verified hit = cache.getIfPresent(key);
    // The ticker drives eviction; the wall clock is checked too, so a jump forward never serves a dead token.
    if (hit != null && clock.instant().isBefore(hit.expires())) {
      return hit;
    }
    JwtVerifier.Verified verified = verifier.verify(token);
    cache.put(key, verified);
    return verified;
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
    public long expireAfterUpdate(String key, JwtVerifier.Verified value, long currentTime, long currentDuration) {
      return expireAfterCreate(key, value, currentTime);
    }

    @Override
    public long expireAfterRead(String key, JwtVerifier.Verified value, long currentTime, long currentDuration) {
      return currentDuration;
    }
  }
}
