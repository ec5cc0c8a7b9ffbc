package io.sparkgate.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyType;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.ConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The IdP's JWKS, fetched over HTTPS (directly, or through OIDC discovery) and kept for a TTL. Keys rotate:
 * a token with an unknown {@code kid} makes it fetch again, at most once per minimum interval. When the IdP
 * is unreachable the last good keys keep working, with a warning and a counter, so an IdP outage does not
 * become a Spark outage for tokens that were already valid.
 *
 * <p>Fetches run on the calling thread under a lock (one at a time); each is bounded by the fetch timeout.
 */
final class RemoteJwks implements KeySource {
  private static final Logger log = LoggerFactory.getLogger(RemoteJwks.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A JWKS is a few KiB; a response far larger is a misconfiguration or an attack, not keys. */
  private static final int MAX_DOCUMENT_BYTES = 1024 * 1024;

  private final URI jwksUrl;
  private final URI discoveryUrl;
  private final String issuer;
  private final HttpClient http;
  private final Clock clock;
  private final Duration ttl;
  private final Duration minRefresh;
  private final Duration timeout;
  private final AtomicLong failures = new AtomicLong();

  private volatile List<JWK> keys = List.of();
  private volatile Instant fetchedAt; // null until the first success

  @GuardedBy("this")
  private Instant lastAttempt;

  RemoteJwks(AuthConfig.Jwt config, Clock clock) {
    this.jwksUrl = config.jwksUrl().orElse(null);
    this.discoveryUrl = config.oidcDiscoveryUrl().orElse(null);
    this.issuer = config.issuer();
    this.clock = clock;
    this.ttl = config.jwksCacheTtl();
    this.minRefresh = config.jwksMinRefreshInterval();
    this.timeout = config.jwksFetchTimeout();
    HttpClient.Builder builder =
        HttpClient.newBuilder()
            .connectTimeout(timeout)
            // A redirect could lead anywhere, including plain http; an IdP serves its JWKS where it
            // says.
            .followRedirects(HttpClient.Redirect.NEVER);
    config.jwksCaFile().ifPresent(ca -> builder.sslContext(trusting(ca)));
    this.http = builder.build();
  }

  /** Fetches the first time; a failure here is only a warning: the IdP may come up after the proxy. */
  RemoteJwks start() {
    refresh(true);
    return this;
  }

  /** Failed fetches since start, for metrics. */
  long fetchFailures() {
    return failures.get();
  }

  @Override
  public List<JWK> keys() {
    Instant at = fetchedAt;
    if (at == null || !clock.instant().isBefore(at.plus(ttl))) {
      refresh(false);
    }
    return keys;
  }

  @Override
  public List<JWK> keysAfterMiss() {
    refresh(false);
    return keys;
  }

  private synchronized void refresh(boolean force) {
    Instant now = clock.instant();
    if (!force && lastAttempt != null && now.isBefore(lastAttempt.plus(minRefresh))) {
      return;
    }
    lastAttempt = now;
    URI url = jwksUrl;
    try {
      if (url == null) {
        url = discover();
      }
      List<JWK> fetched = fetchJwks(url);
      keys = fetched;
      fetchedAt = now;
      log.debug("fetched {} signing keys from {}", fetched.size(), url);
    } catch (IOException | RuntimeException e) {
      failures.incrementAndGet();
      log.warn(
          "cannot fetch JWT signing keys from {}: {}; {} ({} failures so far)",
          url != null ? url : discoveryUrl,
          e.toString(),
          keys.isEmpty()
              ? "no keys yet: JWTs are refused until a fetch succeeds"
              : "keeping the last good " + keys.size() + " keys",
          failures.get());
    }
  }

  private URI discover() throws IOException {
    JsonNode doc;
    try {
      doc = JSON.readTree(get(discoveryUrl));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IOException("the OIDC discovery document is not JSON");
    }
    // OIDC Discovery 4.3: the issuer in the document must be the one the tokens carry.
    String docIssuer = doc.path("issuer").asText("");
    if (!docIssuer.equals(issuer)) {
      throw new IOException(
          "the discovery document's issuer '"
              + docIssuer
              + "' is not auth.jwt.issuer '"
              + issuer
              + "'");
    }
    String uri = doc.path("jwks_uri").asText("");
    URI jwks;
    try {
      jwks = URI.create(uri);
    } catch (IllegalArgumentException e) {
      throw new IOException("the discovery document's jwks_uri is not a URL");
    }
    if (!"https".equalsIgnoreCase(jwks.getScheme())) {
      throw new IOException("the discovery document's jwks_uri '" + uri + "' is not https");
    }
    return jwks;
  }

  private List<JWK> fetchJwks(URI url) throws IOException {
    JWKSet set;
    try {
      set = JWKSet.parse(get(url));
    } catch (java.text.ParseException e) {
      throw new IOException("the response is not a JWK set");
    }
    // An IdP's JWKS holds public keys; a symmetric key there must never become an HMAC secret.
    List<JWK> out =
        set.getKeys().stream()
            .filter(k -> !KeyType.OCT.equals(k.getKeyType()))
            .map(JWK::toPublicJWK)
            .toList();
    if (out.isEmpty()) {
      throw new IOException("the JWK set holds no RSA or EC keys");
    }
    return out;
  }

  private String get(URI url) throws IOException {
    HttpRequest request =
        HttpRequest.newBuilder(url)
            .timeout(timeout)
            .header("Accept", "application/json")
            .GET()
            .build();
    HttpResponse<InputStream> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    } catch (InterruptedException e) {
      Thread.currentThread()
          .interrupt(); // keep the interrupt for the caller; the fetch counts as failed
      throw new IOException("interrupted");
    }
    try (InputStream body = response.body()) {
      if (response.statusCode() != 200) {
        throw new IOException("HTTP " + response.statusCode());
      }
      byte[] bytes = body.readNBytes(MAX_DOCUMENT_BYTES + 1);
      if (bytes.length > MAX_DOCUMENT_BYTES) {
        throw new IOException("response larger than " + MAX_DOCUMENT_BYTES + " bytes");
      }
      return new String(bytes, StandardCharsets.UTF_8);
    }
  }

  private static SSLContext trusting(Path caFile) {
    try (InputStream in = Files.newInputStream(caFile)) {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        store.setCertificateEntry("ca-" + i++, cert);
      }
      if (i == 0) {
        throw new ConfigException(
            "auth.jwt.jwks_ca_file: " + caFile + " holds no PEM certificates");
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return context;
    } catch (IOException | GeneralSecurityException e) {
      throw new ConfigException(
          "auth.jwt.jwks_ca_file: cannot use " + caFile + ": " + e.getMessage(), e);
    }
  }
}
