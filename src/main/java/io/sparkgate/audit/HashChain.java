package io.sparkgate.audit;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The link between audit records: each record carries the SHA-256 of the previous record's line as
 * written, so an edited, deleted or reordered line breaks the chain at that point.
 */
final class HashChain {
  /** The {@code prev} of the very first record of a log. */
  static final String GENESIS = "0".repeat(64);

  /** One SHA-256 per thread: {@code MessageDigest.getInstance} costs a provider lookup on every call. */
  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(HashChain::newSha256);

  private HashChain() {}

  static MessageDigest newSha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  /** Hex SHA-256 of these bytes, with this thread's digest ({@code digest} leaves it reset). */
  static String sha256Hex(byte[] bytes) {
    MessageDigest sha = SHA256.get();
    sha.reset();
    return HexFormat.of().formatHex(sha.digest(bytes));
  }

  static String hash(String line) {
    return sha256Hex(line.getBytes(StandardCharsets.UTF_8));
  }
}
