package io.sparkgate.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import io.sparkgate.config.AuthConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Key rotation against a real HTTPS JWKS endpoint, with time driven by a fake clock. */
final class JwksRotationTest {
  @TempDir Path dir;
  private JwksServer idp;

  @AfterEach
  void tearDown() {
    if (idp != null) {
      idp.close();
    }
  }

  private static String jwks(RSAKey... keys) {
    return new JWKSet(
            List.of(keys).stream().map(k -> (com.nimbusds.jose.jwk.JWK) k.toPublicJWK()).toList())
        .toString();
  }

  private record Setup(AuthFixture fx, Authenticator auth, RemoteJwks jwks) {}

  private Setup start(String keySourceLine) throws Exception {
    AuthFixture fx = new AuthFixture(dir);
    AuthConfig config =
        fx.config(
            "  jwt:\n"
                + keySourceLine
                + "    jwks_ca_file: jwks-ca.pem\n"
                + "    issuer: "
                + AuthFixture.ISSUER
                + "\n    audience: "
                + AuthFixture.AUDIENCE
                + "\n"
                + "    jwks_cache_ttl: 5m\n    jwks_min_refresh_interval: 30s\n    jwks_fetch_timeout: 30s\n"
                // Off, so that each call really goes to the keys: the cache has its own test.
                + "  token_cache:\n    max_entries: 0\n");
    RemoteJwks jwks = new RemoteJwks(config.jwt().orElseThrow(), fx.time).start();
    return new Setup(fx, new Authenticator(config, List.of(jwks), fx.time, fx.time), jwks);
  }

  private static String name(Setup s, String token) throws AuthFailure {
    return s.auth().authenticate(AuthFixture.bearer(token), null, null).name();
  }

  private static AuthFailure.Reason refusal(Setup s, String token) {
    return assertThrows(
            AuthFailure.class, () -> s.auth().authenticate(AuthFixture.bearer(token), null, null))
        .reason();
  }

  @Test
  void jwks_rotation_newKidPickedUp_removedKeyExpires_outageKeepsLastGood() throws Exception {
    idp = new JwksServer(dir, AuthFixture.ISSUER);
    idp.jwks.set(jwks(AuthFixture.k1()));
    Setup s = start("    jwks_url: " + idp.url("/jwks") + "\n");
    String byK1 = AuthFixture.sign(AuthFixture.k1(), s.fx().claims().build());
    String byK2 = AuthFixture.sign(AuthFixture.k2(), s.fx().claims().build());
    assertEquals("alice", name(s, byK1));
    assertEquals(1, idp.jwksRequests.get());

    // The IdP adds k2. Within the minimum refresh interval an unknown kid does not hit the IdP
    // again...
    idp.jwks.set(jwks(AuthFixture.k1(), AuthFixture.k2()));
    assertEquals(AuthFailure.Reason.UNKNOWN_KEY, refusal(s, byK2));
    assertEquals(AuthFailure.Reason.UNKNOWN_KEY, refusal(s, byK2));
    assertEquals(1, idp.jwksRequests.get());
    // ...after it, the unknown kid triggers one fetch and k2 works.
    s.fx().time.advance(Duration.ofSeconds(31));
    assertEquals("alice", name(s, byK2));
    assertEquals(2, idp.jwksRequests.get());

    // The IdP drops k1: its tokens keep working until the TTL, then stop.
    idp.jwks.set(jwks(AuthFixture.k2()));
    s.fx().time.advance(Duration.ofMinutes(4));
    assertEquals("alice", name(s, AuthFixture.sign(AuthFixture.k1(), s.fx().claims().build())));
    s.fx().time.advance(Duration.ofMinutes(2));
    assertEquals(
        AuthFailure.Reason.UNKNOWN_KEY,
        refusal(s, AuthFixture.sign(AuthFixture.k1(), s.fx().claims().build())));

    // The IdP goes away: after the TTL the fetch fails, and the last good keys (k2) keep working.
    idp.close();
    idp = null;
    s.fx().time.advance(Duration.ofMinutes(6));
    assertEquals("alice", name(s, AuthFixture.sign(AuthFixture.k2(), s.fx().claims().build())));
    assertTrue(s.jwks().fetchFailures() >= 1, "failed fetches are counted");
  }

  @Test
  void oidcDiscovery_findsJwks() throws Exception {
    idp = new JwksServer(dir, AuthFixture.ISSUER);
    idp.jwks.set(jwks(AuthFixture.k1()));
    Setup s =
        start("    oidc_discovery_url: " + idp.url("/.well-known/openid-configuration") + "\n");
    assertEquals("alice", name(s, AuthFixture.sign(AuthFixture.k1(), s.fx().claims().build())));
  }

  @Test
  void oidcDiscovery_issuerMismatch_noKeys() throws Exception {
    idp = new JwksServer(dir, "https://other-issuer.test");
    idp.jwks.set(jwks(AuthFixture.k1()));
    Setup s =
        start("    oidc_discovery_url: " + idp.url("/.well-known/openid-configuration") + "\n");
    assertEquals(
        AuthFailure.Reason.NO_KEYS,
        refusal(s, AuthFixture.sign(AuthFixture.k1(), s.fx().claims().build())));
    assertEquals(1, s.jwks().fetchFailures());
  }

  @Test
  void jwks_untrustedCertificate_refusedFetch() throws Exception {
    idp = new JwksServer(dir, AuthFixture.ISSUER);
    idp.jwks.set(jwks(AuthFixture.k1()));
    // Made second in the same directory, its certificate replaces the first one's in jwks-ca.pem.
    JwksServer other = new JwksServer(dir, AuthFixture.ISSUER);
    try {
      // jwks-ca.pem now holds the other server's certificate: the real one must not be trusted.
      Setup s = start("    jwks_url: " + idp.url("/jwks") + "\n");
      assertEquals(
          AuthFailure.Reason.NO_KEYS,
          refusal(s, AuthFixture.sign(AuthFixture.k1(), s.fx().claims().build())));
      assertEquals(0, idp.jwksRequests.get());
    } finally {
      other.close();
    }
  }
}
