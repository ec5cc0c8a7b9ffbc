package io.sparkgate.tls;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * One configured TLS file (e.g. {@code tls.key_file}). Every error it produces starts with the config
 * key and the path, so an operator can tell at a glance which setting to fix.
 */
record TlsFile(String configKey, Path path) {

  static final String CERT_FILE = "tls.cert_file";
  static final String KEY_FILE = "tls.key_file";
  static final String CLIENT_CA_FILE = "tls.client_ca_file";

  byte[] read() throws TlsFileException {
    try {
      if (Files.isDirectory(path)) {
        throw error("is a directory, not a file");
      }
      byte[] bytes = Files.readAllBytes(path);
      if (bytes.length == 0) {
        throw error("file is empty");
      }
      return bytes;
    } catch (NoSuchFileException e) {
      throw error("file does not exist");
    } catch (IOException e) {
      // IOException messages name the path and the OS reason, never the contents.
      throw error(
          "cannot read file (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")");
    }
  }

  TlsFileException error(String what) {
    return new TlsFileException(configKey + " " + path + ": " + what);
  }

  /** SHA-256 over file contents: how reloads notice a change, independent of mtime granularity. */
  static byte[] fingerprint(byte[]... contents) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      for (byte[] c : contents) {
        md.update(c);
        md.update((byte) 0);
      }
      return md.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A file's problem, already phrased for humans: "tls.key_file /x.pem: not a PKCS#8 private key". */
  static final class TlsFileException extends Exception {
    private static final long serialVersionUID = 1L;

    TlsFileException(String message) {
      super(message);
    }
  }
}
