package io.sparkgate.revoke;

import java.util.Map;

/**
 * Where revocations are kept: Redis (every replica reads the same), a file, or memory. Each write moves
 * {@link #version}, which the replicas poll to learn of another's writes.
 */
interface RevocationStore {
  /** Everything kept, by {@link Revocation#id()}, and the version it was read at. */
  record Snapshot(long version, Map<String, Revocation> all) {}

  /** @throws RuntimeException when the store cannot be read now (Redis away) */
  Snapshot load();

  /** The version only: cheap enough to ask several times a second. */
  long version();

  /** Keeps {@code r}, replacing what was kept for the same principal or token. */
  void put(Revocation r);

  /** Forgets the revocation kept under {@code id}; whether there was one. */
  boolean remove(String id);
}
