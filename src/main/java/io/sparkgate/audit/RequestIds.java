package io.sparkgate.audit;

import java.security.SecureRandom;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * Request ids for audit records: random (version 4) UUIDs. They only need to be unique, not unpredictable
 * (nothing is authorized by one, and no client sees them), so they come from fast per-thread generators split
 * from one seeded from the system's secure source, rather than from {@link UUID#randomUUID()}'s locked
 * SecureRandom per record.
 */
final class RequestIds {
  private static final SplittableRandom ROOT = new SplittableRandom(new SecureRandom().nextLong());
  private static final ThreadLocal<SplittableRandom> SOURCE = ThreadLocal.withInitial(RequestIds::split);

  private RequestIds() {}

  private static SplittableRandom split() {
    synchronized (ROOT) {
      return ROOT.split();
    }
  }

  static String next() {
    SplittableRandom random = SOURCE.get();
    long msb = (random.nextLong() & ~0xF000L) | 0x4000L; // version 4
    long lsb = (random.nextLong() & ~(0xC000L << 48)) | (0x8000L << 48); // IETF variant
    return new UUID(msb, lsb).toString();
  }
}
