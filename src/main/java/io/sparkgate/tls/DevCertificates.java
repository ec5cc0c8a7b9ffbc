package io.sparkgate.tls;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Development-only certificates: a throwaway CA, a server certificate for localhost/127.0.0.1 and a
 * client certificate for mTLS, plus PKCS#12 stores for JVM clients. Short-lived on purpose; never use
 * these in production.
 */
public final class DevCertificates {
  private static final SecureRandom RANDOM = new SecureRandom();

  private DevCertificates() {}

  public enum KeyType {
    RSA,
    EC
  }

  /**
   * What to generate.
   *
   * @param keyType RSA-2048 or EC P-256 for every key
   * @param clientName CN of the client certificate (the principal the proxy will see)
   * @param clientSan optional extra SAN for the client: an e-mail if it contains '@' and no ':',
   *     otherwise a URI (e.g. spiffe://dev/user); null for none
   * @param password password of truststore.p12 and client.p12
   * @param validity lifetime of every certificate
   */
  public record Options(
      KeyType keyType, String clientName, String clientSan, String password, Duration validity) {
    public Options {
      Objects.requireNonNull(keyType, "keyType");
      Objects.requireNonNull(clientName, "clientName");
      Objects.requireNonNull(password, "password");
      Objects.requireNonNull(validity, "validity");
    }

    public static Options defaults() {
      return new Options(KeyType.RSA, "dev-user", null, "changeit", Duration.ofDays(30));
    }

    public Options withKeyType(KeyType k) {
      return new Options(k, clientName, clientSan, password, validity);
    }

    public Options withClientName(String n) {
      return new Options(keyType, n, clientSan, password, validity);
    }

    public Options withClientSan(String s) {
      return new Options(keyType, clientName, s, password, validity);
    }

    public Options withPassword(String p) {
      return new Options(keyType, clientName, clientSan, p, validity);
    }

    public Options withValidity(Duration v) {
      return new Options(keyType, clientName, clientSan, password, v);
    }
  }

  /** Paths of everything {@link #generate} wrote. */
  public record Generated(
      Path dir,
      Path caCert,
      Path caKey,
      Path serverCert,
      Path serverKey,
      Path clientCert,
      Path clientKey,
      Path trustStore,
      Path clientKeyStore) {}

  /** A certificate and its key, with the chain a peer needs (leaf first, issuer(s) after). */
  public record Issued(
      X509Certificate certificate, PrivateKey privateKey, List<X509Certificate> chain) {
    /** Writes the chain (PEM) and the PKCS#8 PEM key (0600), each atomically replacing any old file. */
    public void writePem(Path certFile, Path keyFile) throws IOException {
      StringBuilder pem = new StringBuilder();
      for (X509Certificate c : chain) {
        pem.append(certPem(c));
      }
      // Key first: a reloader polling between the two writes then sees "key does not match", keeps
      // the old pair and retries; it never serves a mismatched pair either way.
      writeAtomically(keyFile, keyPem(privateKey), true);
      writeAtomically(certFile, pem.toString(), false);
    }
  }

  /** Generates the full dev set into {@code dir} (created if needed), overwriting older files. */
  public static Generated generate(Path dir, Options options) throws IOException {
    Files.createDirectories(dir);
    Generated f =
        new Generated(
            dir,
            dir.resolve("ca.pem"),
            dir.resolve("ca.key"),
            dir.resolve("server.pem"),
            dir.resolve("server.key"),
            dir.resolve("client.pem"),
            dir.resolve("client.key"),
            dir.resolve("truststore.p12"),
            dir.resolve("client.p12"));
    Authority ca = Authority.create("Sparkgate Dev CA", options.keyType(), options.validity());
    ca.writePem(f.caCert(), f.caKey());
    ca.issueServer(options.keyType(), options.validity()).writePem(f.serverCert(), f.serverKey());
    Issued client =
        ca.issueClient(
            options.clientName(), options.clientSan(), options.keyType(), options.validity());
    client.writePem(f.clientCert(), f.clientKey());
    char[] password = options.password().toCharArray();
    try {
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry("sparkgate-dev-ca", ca.certificate());
      writeAtomically(f.trustStore(), store(trust, password), false);

      KeyStore clientStore = KeyStore.getInstance("PKCS12");
      clientStore.load(null, null);
      clientStore.setKeyEntry(
          "client", client.privateKey(), password, client.chain().toArray(new X509Certificate[0]));
      writeAtomically(f.clientKeyStore(), store(clientStore, password), true);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot write PKCS#12 stores: " + e.getMessage(), e);
    }
    return f;
  }

  /** A dev CA. Create a fresh one, or load {@code ca.pem}/{@code ca.key} to issue more certificates. */
  public static final class Authority {
    private final X509Certificate certificate;
    private final PrivateKey privateKey;

    Authority(X509Certificate certificate, PrivateKey privateKey) {
      this.certificate = certificate;
      this.privateKey = privateKey;
    }

    /** A new self-signed CA, unrelated to any other (tests use one as the "wrong CA"). */
    public static Authority create(String commonName, KeyType keyType, Duration validity) {
      KeyPair kp = newKeyPair(keyType);
      X500Name name = new X500Name("CN=" + commonName + ",O=Sparkgate Dev");
      X509Certificate cert =
          sign(
              name,
              kp,
              name,
              kp.getPrivate(),
              validity,
              b -> {
                b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
                b.addExtension(
                    Extension.keyUsage,
                    true,
                    new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
              });
      return new Authority(cert, kp.getPrivate());
    }

    public X509Certificate certificate() {
      return certificate;
    }

    public void writePem(Path certFile, Path keyFile) throws IOException {
      writeAtomically(keyFile, keyPem(privateKey), true);
      writeAtomically(certFile, certPem(certificate), false);
    }

    /** A server certificate for DNS:localhost and IP:127.0.0.1; every call gets a new serial. */
    public Issued issueServer(KeyType keyType, Duration validity) {
      GeneralNames sans =
          new GeneralNames(
              new GeneralName[] {
                new GeneralName(GeneralName.dNSName, "localhost"),
                new GeneralName(GeneralName.iPAddress, "127.0.0.1")
              });
      return issue(
          new X500Name("CN=localhost,O=Sparkgate Dev"),
          keyType,
          validity,
          KeyPurposeId.id_kp_serverAuth,
          sans);
    }

    /** A client certificate with CN={@code principal} and an optional e-mail/URI SAN. */
    public Issued issueClient(
        String principal, String sanOrNull, KeyType keyType, Duration validity) {
      GeneralNames sans = null;
      if (sanOrNull != null && !sanOrNull.isBlank()) {
        boolean email = sanOrNull.contains("@") && !sanOrNull.contains(":");
        sans =
            new GeneralNames(
                new GeneralName(
                    email ? GeneralName.rfc822Name : GeneralName.uniformResourceIdentifier,
                    sanOrNull));
      }
      return issue(
          new X500Name("CN=" + principal + ",O=Sparkgate Dev"),
          keyType,
          validity,
          KeyPurposeId.id_kp_clientAuth,
          sans);
    }

    private Issued issue(
        X500Name subject,
        KeyType keyType,
        Duration validity,
        KeyPurposeId purpose,
        GeneralNames sansOrNull) {
      KeyPair kp = newKeyPair(keyType);
      X500Name issuer = X500Name.getInstance(certificate.getSubjectX500Principal().getEncoded());
      // keyEncipherment only makes sense for RSA (TLS 1.2 RSA key exchange); EC keys only sign.
      int usage =
          KeyUsage.digitalSignature
              | (kp.getPublic().getAlgorithm().equals("RSA") ? KeyUsage.keyEncipherment : 0);
      X509Certificate cert =
          sign(
              subject,
              kp,
              issuer,
              privateKey,
              validity,
              b -> {
                b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
                b.addExtension(Extension.keyUsage, true, new KeyUsage(usage));
                b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
                b.addExtension(
                    Extension.authorityKeyIdentifier,
                    false,
                    new JcaX509ExtensionUtils().createAuthorityKeyIdentifier(certificate));
                if (sansOrNull != null) {
                  b.addExtension(Extension.subjectAlternativeName, false, sansOrNull);
                }
              });
      List<X509Certificate> chain = new ArrayList<>();
      chain.add(cert);
      chain.add(certificate);
      return new Issued(cert, kp.getPrivate(), List.copyOf(chain));
    }
  }

  private interface Extensions {
    void add(X509v3CertificateBuilder b) throws IOException, GeneralSecurityException;
  }

  private static X509Certificate sign(
      X500Name subject,
      KeyPair subjectKeys,
      X500Name issuer,
      PrivateKey issuerKey,
      Duration validity,
      Extensions extensions) {
    Instant now = Instant.now();
    // Random 127-bit positive serial: unique per certificate, which the reload tests rely on.
    BigInteger serial = new BigInteger(127, RANDOM).setBit(126);
    try {
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              issuer,
              serial,
              Date.from(now.minus(Duration.ofMinutes(5))), // tolerate small clock skew
              Date.from(now.plus(validity)),
              subject,
              subjectKeys.getPublic());
      b.addExtension(
          Extension.subjectKeyIdentifier,
          false,
          new JcaX509ExtensionUtils().createSubjectKeyIdentifier(subjectKeys.getPublic()));
      extensions.add(b);
      String alg = issuerKey.getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
      return new JcaX509CertificateConverter()
          .getCertificate(b.build(new JcaContentSignerBuilder(alg).build(issuerKey)));
    } catch (IOException | GeneralSecurityException | OperatorCreationException e) {
      throw new IllegalStateException(
          "cannot create certificate " + subject + ": " + e.getMessage(), e);
    }
  }

  private static KeyPair newKeyPair(KeyType type) {
    try {
      if (type == KeyType.EC) {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
        return g.generateKeyPair();
      }
      KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
      g.initialize(2048, RANDOM);
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot generate " + type + " key", e);
    }
  }

  static String certPem(X509Certificate c) {
    try {
      return Pem.encode("CERTIFICATE", c.getEncoded());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** JCA private keys encode as PKCS#8, which is what tls.key_file requires. */
  static String keyPem(PrivateKey k) {
    return Pem.encode("PRIVATE KEY", k.getEncoded());
  }

  private static byte[] store(KeyStore ks, char[] password)
      throws IOException, GeneralSecurityException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ks.store(out, password);
    return out.toByteArray();
  }

  private static void writeAtomically(Path target, String text, boolean secret) throws IOException {
    writeAtomically(target, text.getBytes(StandardCharsets.US_ASCII), secret);
  }

  /**
   * Write to a sibling temp file and rename over the target, so a reloading server never reads a
   * half-written file. Secret files are created 0600 before any byte is written (POSIX only).
   */
  private static void writeAtomically(Path target, byte[] content, boolean secret)
      throws IOException {
    Path dir = target.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    Path tmp =
        posix
            ? Files.createTempFile(
                dir,
                "." + target.getFileName(),
                ".tmp",
                PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString(secret ? "rw-------" : "rw-r--r--")))
            : Files.createTempFile(dir, "." + target.getFileName(), ".tmp");
    try {
      Files.write(tmp, content);
      try {
        Files.move(
            tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }
}
