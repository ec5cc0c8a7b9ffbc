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

  private HashChain() {}

  static String hash(String line) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(sha.digest(line.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
