package io.sparkgate.tls;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/**
 * A client's TLS from PEM files, for {@code sparkgate admin} talking to the admin listener: the CAs to trust
 * (else the JVM's) and, optionally, a client certificate to present. Read once (a command runs for a second);
 * errors name the file and what is wrong with it, never its contents.
 */
public final class ClientTls {
  /** Protects the key only inside the in-memory store a KeyManagerFactory must be given. */
  private static final char[] IN_MEMORY = "in-memory".toCharArray();

  private ClientTls() {}

  /** Thrown for a file that cannot be used; the message starts with the file's path. */
  public static final class ClientTlsException extends Exception {
    private static final long serialVersionUID = 1L;

    ClientTlsException(Path file, String problem) {
      super(file + ": " + problem);
    }
  }

  /**
   * @param caFile PEM CAs the server's certificate must chain to; empty trusts the JVM's default CAs
   * @param certFile PEM certificate chain to present, leaf first; given with {@code keyFile}, or neither is
   * @param keyFile its PKCS#8 PEM private key
   */
  public static SSLContext context(
      Optional<Path> caFile, Optional<Path> certFile, Optional<Path> keyFile)
      throws ClientTlsException {
    if (certFile.isPresent() != keyFile.isPresent()) {
      throw new IllegalArgumentException("a client certificate needs both its file and its key");
    }
    TrustManager[] trust = caFile.isPresent() ? trusting(caFile.get()) : null;
    KeyManager[] keys = certFile.isPresent() ? presenting(certFile.get(), keyFile.get()) : null;
    try {
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(keys, trust, null); // null: the JVM's defaults
      return context;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JVM cannot make a TLS context", e);
    }
  }

  private static TrustManager[] trusting(Path caFile) throws ClientTlsException {
    List<X509Certificate> cas = certificates(caFile);
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      for (int i = 0; i < cas.size(); i++) store.setCertificateEntry("ca-" + i, cas.get(i));
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      return tmf.getTrustManagers();
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("this JVM cannot hold trusted certificates", e);
    }
  }

  private static KeyManager[] presenting(Path certFile, Path keyFile) throws ClientTlsException {
    List<X509Certificate> chain = certificates(certFile);
    PrivateKey key;
    try {
      key = Pem.pkcs8PrivateKey(read(keyFile));
    } catch (Pem.PemException e) {
      throw new ClientTlsException(keyFile, e.getMessage());
    }
    if (!IdentityReloader.matches(key, chain.get(0))) {
      throw new ClientTlsException(
          keyFile, "the private key does not match the first certificate in " + certFile);
    }
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry("client", key, IN_MEMORY, chain.toArray(new X509Certificate[0]));
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(store, IN_MEMORY);
      return kmf.getKeyManagers();
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("this JVM cannot hold a client certificate", e);
    }
  }

  private static List<X509Certificate> certificates(Path file) throws ClientTlsException {
    try {
      return Pem.certificates(read(file));
    } catch (Pem.PemException e) {
      throw new ClientTlsException(file, e.getMessage());
    }
  }

  private static byte[] read(Path file) throws ClientTlsException {
    try {
      return Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new ClientTlsException(file, "no such file");
    } catch (AccessDeniedException e) {
      throw new ClientTlsException(file, "not readable by this user");
    } catch (IOException e) {
      throw new ClientTlsException(file, "cannot read it: " + e.getMessage());
    }
  }
}
