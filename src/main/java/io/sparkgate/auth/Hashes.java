package io.sparkgate.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 of a token: how tokens are stored (static tokens) and cached, so no map ever holds a token. */
final class Hashes {
  private Hashes() {}

  /**
   * One digest per thread: this runs on every call, and looking up the provider each time cost as much as
   * hashing the token. A digest is reset by {@link MessageDigest#digest(byte[])}, and never shared.
   */
  private static final ThreadLocal<MessageDigest> SHA256 =
      ThreadLocal.withInitial(
          () -> {
            try {
              return MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
              throw new IllegalStateException("every JVM has SHA-256", e);
            }
          });

  static String sha256Hex(String token) {
    return HexFormat.of().formatHex(sha256(token));
  }

  static byte[] sha256(String token) {
    return SHA256.get().digest(token.getBytes(StandardCharsets.UTF_8));
  }
}
