package io.sparkgate.tls;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Minimal PEM reading and writing. We parse PEM ourselves (rather than via CertificateFactory on the
 * whole file or grpc's CertificateUtils) so that every failure can say exactly which block is wrong,
 * e.g. "found a PKCS#1 'RSA PRIVATE KEY'" instead of a generic "invalid key format".
 *
 * <p>Error messages never contain file contents: a private key must not end up in a log line.
 */
final class Pem {
  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \\1-----", Pattern.DOTALL);

  private Pem() {}

  record Block(String type, byte[] der) {}

  /** Thrown for content problems; the caller prefixes "config.key /path: ". */
  static final class PemException extends Exception {
    private static final long serialVersionUID = 1L;

    PemException(String message) {
      super(message);
    }
  }

  static List<Block> blocks(byte[] content) throws PemException {
    String text = new String(content, StandardCharsets.US_ASCII);
    Matcher m = BLOCK.matcher(text);
    List<Block> out = new ArrayList<>();
    while (m.find()) {
      try {
        out.add(new Block(m.group(1), Base64.getMimeDecoder().decode(m.group(2).trim())));
      } catch (IllegalArgumentException e) {
        throw new PemException("PEM block '" + m.group(1) + "' is not valid base64");
      }
    }
    return out;
  }

  static List<X509Certificate> certificates(byte[] content) throws PemException {
    List<X509Certificate> certs = new ArrayList<>();
    CertificateFactory cf;
    try {
      cf = CertificateFactory.getInstance("X.509");
    } catch (CertificateException e) {
      throw new IllegalStateException("no X.509 support in this JVM", e);
    }
    int index = 0;
    for (Block b : blocks(content)) {
      if (!b.type().equals("CERTIFICATE")) {
        continue; // e.g. a private key bundled in the same file; we only want certificates here
      }
      index++;
      try {
        certs.add((X509Certificate) cf.generateCertificate(new ByteArrayInputStream(b.der())));
      } catch (CertificateException | ClassCastException e) {
        throw new PemException("certificate #" + index + " is not a valid X.509 certificate");
      }
    }
    if (certs.isEmpty()) {
      throw new PemException("no PEM 'CERTIFICATE' block found");
    }
    return certs;
  }

  /** Exactly one unencrypted PKCS#8 "PRIVATE KEY" block holding an RSA or EC key. */
  static PrivateKey pkcs8PrivateKey(byte[] content) throws PemException {
    List<Block> keys = new ArrayList<>();
    for (Block b : blocks(content)) {
      switch (b.type()) {
        case "PRIVATE KEY" -> keys.add(b);
        case "RSA PRIVATE KEY", "EC PRIVATE KEY" ->
            throw new PemException(
                "not a PKCS#8 private key (found a traditional '"
                    + b.type()
                    + "' block; convert it with "
                    + "'openssl pkcs8 -topk8 -nocrypt -in old.key -out new.key')");
        case "ENCRYPTED PRIVATE KEY" ->
            throw new PemException(
                "not a PKCS#8 private key we can use: it is encrypted; an unencrypted key is required");
        default -> {} // certificates or parameters next to the key are tolerated
      }
    }
    if (keys.isEmpty()) {
      throw new PemException("not a PKCS#8 private key (no PEM 'PRIVATE KEY' block found)");
    }
    if (keys.size() > 1) {
      throw new PemException("contains " + keys.size() + " private keys; exactly one is required");
    }
    byte[] der = keys.get(0).der();
    // The algorithm OID sits inside the PKCS#8 structure; trying both factories is simpler than
    // parsing it and gives the same answer for the two key types we accept.
    for (String algorithm : List.of("RSA", "EC")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (InvalidKeySpecException e) {
        // not this algorithm; try the next
      } catch (java.security.NoSuchAlgorithmException e) {
        throw new IllegalStateException(algorithm + " not supported by this JVM", e);
      }
    }
    throw new PemException("not a PKCS#8 private key of a supported type (RSA or EC required)");
  }

  static String encode(String type, byte[] der) {
    String body =
        Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }
}
