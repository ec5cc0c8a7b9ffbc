package io.sparkgate.auth;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** A real HTTPS JWKS endpoint (and OIDC discovery document) on loopback, with a certificate made here. */
final class JwksServer implements AutoCloseable {
  final AtomicReference<String> jwks = new AtomicReference<>("{\"keys\":[]}");
  final AtomicInteger jwksRequests = new AtomicInteger();
  private final HttpsServer server;
  private final Path caFile;

  JwksServer(Path dir, String issuer) throws Exception {
    KeyPair pair = KeyPairGenerator.getInstance("EC").generateKeyPair();
    X509Certificate cert = selfSigned(pair);
    caFile = dir.resolve("jwks-ca.pem");
    Files.writeString(
        caFile,
        "-----BEGIN CERTIFICATE-----\n"
            + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(cert.getEncoded())
            + "\n-----END CERTIFICATE-----\n");
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry("jwks", pair.getPrivate(), new char[0], new X509Certificate[] {cert});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(store, new char[0]);
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(kmf.getKeyManagers(), null, null);

    server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setHttpsConfigurator(new HttpsConfigurator(tls));
    server.createContext(
        "/jwks",
        exchange -> {
          jwksRequests.incrementAndGet();
          respond(exchange, jwks.get());
        });
    server.createContext(
        "/.well-known/openid-configuration",
        exchange ->
            respond(
                exchange, "{\"issuer\":\"" + issuer + "\",\"jwks_uri\":\"" + url("/jwks") + "\"}"));
    server.start();
  }

  String url(String path) {
    return "https://127.0.0.1:" + server.getAddress().getPort() + path;
  }

  Path caFile() {
    return caFile;
  }

  private static void respond(com.sun.net.httpserver.HttpExchange exchange, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(200, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static X509Certificate selfSigned(KeyPair pair) throws Exception {
    X500Name name = new X500Name("CN=127.0.0.1");
    long now = System.currentTimeMillis();
    JcaX509v3CertificateBuilder builder =
        new JcaX509v3CertificateBuilder(
            name,
            BigInteger.valueOf(now),
            new Date(now - 60_000),
            new Date(now + 3_600_000),
            name,
            pair.getPublic());
    builder.addExtension(
        Extension.subjectAlternativeName,
        false,
        new GeneralNames(
            new GeneralName[] {
              new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
              new GeneralName(GeneralName.dNSName, "localhost")
            }));
    return new JcaX509CertificateConverter()
        .getCertificate(
            builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate())));
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
