package io.sparkgate.route;

import java.nio.charset.StandardCharsets;
import java.util.Collection;

/**
 * Rendezvous (highest random weight) hashing: each backend gets a score from the session and its own address,
 * and the highest wins. Every replica computes the same winner from the same healthy backends without
 * asking anyone, and a backend that joins or leaves moves only the new sessions that would score highest on
 * it (placed sessions never move: the registry remembers them).
 */
final class Rendezvous {
  private Rendezvous() {}

  /** The backend of {@code backends} that wins for this session; null when there is none. */
  static String pick(Collection<String> backends, String userId, String sessionId) {
    long session = fnv(fnv(OFFSET, userId), "\u0000" + sessionId);
    String best = null;
    long bestScore = 0;
    for (String backend : backends) {
      long score = mix(fnv(session, "\u0000" + backend));
      // Ties (practically impossible) go to the smaller address, so every replica breaks them
      // alike.
      if (best == null
          || Long.compareUnsigned(score, bestScore) > 0
          || (score == bestScore && backend.compareTo(best) < 0)) {
        best = backend;
        bestScore = score;
      }
    }
    return best;
  }

  private static final long OFFSET = 0xcbf29ce484222325L;

  /** FNV-1a over the UTF-8 bytes: stable across JVMs and releases, unlike String.hashCode's spread. */
  private static long fnv(long hash, String text) {
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      hash ^= b & 0xff;
      hash *= 0x100000001b3L;
    }
    return hash;
  }

  /** A finalizer (from SplitMix64) so that scores of similar inputs spread over the whole range. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
