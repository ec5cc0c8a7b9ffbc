package io.sparkgate.audit;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The link between audit records: each record carries the SHA-256 of the previous record's line as
 * written, so an edited, deleted or reordered line breaks the chain at that point. An instance is the head
 * of one log's chain, which only the writer thread moves.
 */
final class HashChain {
  /** The {@code prev} of the very first record of a log. */
  static final String GENESIS = "0".repeat(64);

  /** One SHA-256 per thread: {@code MessageDigest.getInstance} costs a provider lookup on every call. */
  private static final ThreadLocal<MessageDigest> SHA256 =
      ThreadLocal.withInitial(HashChain::newSha256);

  private static final ObjectMapper JSON = new ObjectMapper();

  private long seq;
  private String prev;

  private HashChain(long seq, String prev) {
    this.seq = seq;
    this.prev = prev;
  }

  /** The head of a new log: the next record is record 1. */
  static HashChain start() {
    return new HashChain(0, GENESIS);
  }

  /**
   * The head after {@code files}' last record, so that a restarted proxy continues the chain; a new log's
   * when there is none.
   */
  static HashChain resume(AuditFiles files) throws IOException {
    String last = files.lastLine();
    if (last == null) {
      return start();
    }
    try {
      return new HashChain(JSON.readTree(last).path("seq").asLong(), hash(last));
    } catch (IOException e) {
      throw new IOException(
          "audit.file "
              + files.current()
              + ": the last record is not valid JSON, so the "
              + "hash chain cannot continue; run 'sparkgate audit verify' and move the damaged file aside",
          e);
    }
  }

  /** The sequence number of the next record. */
  long nextSeq() {
    return seq + 1;
  }

  /** The hash the next record carries as {@code prev}. */
  String prev() {
    return prev;
  }

  /** Where the chain stands: the last record's sequence number and hash. */
  record Head(long seq, String prev) {}

  Head head() {
    return new Head(seq, prev);
  }

  /** Moves the head back to {@code head}: the records appended since were never written. */
  void reset(Head head) {
    seq = head.seq();
    prev = head.prev();
  }

  /** Moves the head past {@code line}, the next record as written (without its newline). */
  void append(byte[] line) {
    seq++;
    prev = sha256Hex(line);
  }

  private static MessageDigest newSha256() {
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
