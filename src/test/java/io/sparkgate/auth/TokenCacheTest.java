package io.sparkgate.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgate.call.Principal;
import io.sparkgate.testing.FakeTime;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

final class TokenCacheTest {
  private final FakeTime time = new FakeTime();
  private final AtomicInteger verifications = new AtomicInteger();

  private TokenCache.Verifier expiringIn(Duration d) {
    return token -> {
      verifications.incrementAndGet();
      return new JwtVerifier.Verified(
          new Principal(
              "alice", List.of(), Optional.empty(), Principal.Method.JWT, Optional.empty()),
          time.instant().plus(d));
    };
  }

  @Test
  void cache_hit_verifiesOnce() throws Exception {
    TokenCache cache = new TokenCache(100, Duration.ofMinutes(5), time, time);
    cache.get("t", expiringIn(Duration.ofHours(1)), null);
    cache.get("t", expiringIn(Duration.ofHours(1)), null);
    assertEquals(1, verifications.get());
  }

  @Test
  void cache_expire_atTokenExp() throws Exception {
    TokenCache cache = new TokenCache(100, Duration.ofMinutes(5), time, time);
    cache.get("t", expiringIn(Duration.ofMinutes(2)), null);
    time.advance(Duration.ofSeconds(119));
    cache.get("t", expiringIn(Duration.ofMinutes(2)), null);
    assertEquals(1, verifications.get());
    time.advance(Duration.ofSeconds(2));
    cache.get("t", expiringIn(Duration.ofMinutes(2)), null);
    assertEquals(2, verifications.get());
  }

  @Test
  void cache_expire_afterMaxAge() throws Exception {
    TokenCache cache = new TokenCache(100, Duration.ofMinutes(5), time, time);
    cache.get("t", expiringIn(Duration.ofHours(1)), null);
    time.advance(Duration.ofMinutes(5).plusSeconds(1));
    cache.get("t", expiringIn(Duration.ofHours(1)), null);
    assertEquals(2, verifications.get());
  }

  @Test
  void cache_bounded() throws Exception {
    TokenCache cache = new TokenCache(10, Duration.ofMinutes(5), time, time);
    for (int i = 0; i < 100; i++) {
      cache.get("t" + i, expiringIn(Duration.ofHours(1)), null);
    }
    assertEquals(true, cache.size() <= 10, "size " + cache.size());
  }

  /** Verifies any token as the user named by it, expiring in {@code d}. */
  private TokenCache.Verifier namedBy(Duration d) {
    return token -> {
      verifications.incrementAndGet();
      return new JwtVerifier.Verified(
          new Principal(token, List.of(), Optional.empty(), Principal.Method.JWT, Optional.empty()),
          time.instant().plus(d));
    };
  }

  @Test
  void connection_remembersItsLastToken_andNeverServesItForAnother() throws Exception {
    TokenCache cache = new TokenCache(100, Duration.ofMinutes(5), time, time);
    TokenCache.LastToken connection = new TokenCache.LastToken();
    assertEquals(
        "alice", cache.get("alice", namedBy(Duration.ofHours(1)), connection).principal().name());
    assertEquals(
        "alice", cache.get("alice", namedBy(Duration.ofHours(1)), connection).principal().name());
    assertEquals(1, verifications.get());
    // Another token on the same connection: verified as itself, then remembered in place of the
    // first.
    assertEquals(
        "bob", cache.get("bob", namedBy(Duration.ofHours(1)), connection).principal().name());
    assertEquals(2, verifications.get());
    assertEquals(
        "bob", cache.get("bob", namedBy(Duration.ofHours(1)), connection).principal().name());
    // The first is still in the shared cache.
    assertEquals(
        "alice", cache.get("alice", namedBy(Duration.ofHours(1)), connection).principal().name());
    assertEquals(2, verifications.get());
  }

  @Test
  void connection_entryEndsWithTheCacheEntry_atMaxAge() throws Exception {
    TokenCache cache = new TokenCache(100, Duration.ofMinutes(5), time, time);
    cache.get("t", namedBy(Duration.ofHours(1)), new TokenCache.LastToken());
    time.advance(Duration.ofMinutes(4));
    // A new connection remembers the token from a cache entry one minute from its end, and for no
    // longer.
    TokenCache.LastToken late = new TokenCache.LastToken();
    cache.get("t", namedBy(Duration.ofHours(1)), late);
    assertEquals(1, verifications.get());
    time.advance(Duration.ofMinutes(1).plusSeconds(1));
    cache.get("t", namedBy(Duration.ofHours(1)), late);
    assertEquals(2, verifications.get());
  }

  @Test
  void connection_entryEndsAtTheTokensExp() throws Exception {
    TokenCache cache = new TokenCache(100, Duration.ofMinutes(5), time, time);
    TokenCache.LastToken connection = new TokenCache.LastToken();
    cache.get("t", namedBy(Duration.ofMinutes(2)), connection);
    time.advance(Duration.ofSeconds(119));
    cache.get("t", namedBy(Duration.ofMinutes(2)), connection);
    assertEquals(1, verifications.get());
    time.advance(Duration.ofSeconds(2));
    cache.get("t", namedBy(Duration.ofMinutes(2)), connection);
    assertEquals(2, verifications.get());
  }

  @Test
  void cache_disabled_alwaysVerifies() throws Exception {
    TokenCache cache = new TokenCache(0, Duration.ofMinutes(5), time, time);
    cache.get("t", expiringIn(Duration.ofHours(1)), null);
    cache.get("t", expiringIn(Duration.ofHours(1)), new TokenCache.LastToken());
    assertEquals(2, verifications.get());
  }
}
