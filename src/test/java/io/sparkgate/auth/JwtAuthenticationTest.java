package io.sparkgate.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import io.grpc.Metadata;
import io.sparkgate.auth.AuthFailure.Reason;
import io.sparkgate.call.Principal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** JWT verification through the authenticator, as a call's headers reach it. */
final class JwtAuthenticationTest {
  @TempDir Path dir;
  private AuthFixture fx;
  private Authenticator auth;

  @BeforeEach
  void setUp() throws Exception {
    fx = new AuthFixture(dir);
    auth =
        fx.authenticator(fx.config(AuthFixture.JWT_FILE + "  token_cache:\n    max_entries: 0\n"));
  }

  private AuthFailure refused(Metadata headers) {
    return assertThrows(AuthFailure.class, () -> auth.authenticate(headers, null, null));
  }

  private AuthFailure refused(String token) {
    return refused(AuthFixture.bearer(token));
  }

  @Test
  void jwt_valid_principalGroupsTenant() throws Exception {
    Principal p = auth.authenticate(AuthFixture.bearer(fx.token()), null, null);
    assertEquals("alice", p.name());
    assertEquals(List.of("analysts", "eng"), p.groups());
    assertEquals(Optional.of("acme"), p.tenant());
    assertEquals(Principal.Method.JWT, p.method());
  }

  @Test
  void jwt_authenticationHeader_andLowercaseScheme_accepted() throws Exception {
    Metadata headers = new Metadata();
    headers.put(BearerTokens.AUTHENTICATION, "bearer " + fx.token());
    assertEquals("alice", auth.authenticate(headers, null, null).name());
  }

  @Test
  void jwt_sameTokenInBothHeaders_accepted() throws Exception {
    Metadata headers = AuthFixture.bearer(fx.token());
    headers.put(BearerTokens.AUTHENTICATION, "BEARER " + fx.token());
    assertEquals("alice", auth.authenticate(headers, null, null).name());
  }

  @Test
  void jwt_groupsAsSpaceSeparatedString() throws Exception {
    String token = fx.token(c -> c.claim("groups", "a b  c"));
    assertEquals(
        List.of("a", "b", "c"), auth.authenticate(AuthFixture.bearer(token), null, null).groups());
  }

  @Test
  void jwt_expired_refused() {
    Instant exp = fx.time.instant().minus(Duration.ofMinutes(5));
    AuthFailure e =
        refused(
            fx.token(
                c ->
                    c.issueTime(Date.from(exp.minusSeconds(600)))
                        .notBeforeTime(Date.from(exp.minusSeconds(600)))
                        .expirationTime(Date.from(exp))));
    assertEquals(Reason.EXPIRED, e.reason());
    assertEquals("token expired at 2026-03-01T11:55:00Z: get a new one", e.clientMessage());
  }

  @Test
  void jwt_expiredWithinClockSkew_accepted() throws Exception {
    Instant exp = fx.time.instant().minusSeconds(30);
    String token =
        fx.token(
            c ->
                c.issueTime(Date.from(exp.minusSeconds(600)))
                    .notBeforeTime(Date.from(exp.minusSeconds(600)))
                    .expirationTime(Date.from(exp)));
    assertEquals("alice", auth.authenticate(AuthFixture.bearer(token), null, null).name());
  }

  @Test
  void jwt_notYetValid_refused() {
    Instant nbf = fx.time.instant().plus(Duration.ofMinutes(5));
    AuthFailure e = refused(fx.token(c -> c.notBeforeTime(Date.from(nbf))));
    assertEquals(Reason.NOT_YET_VALID, e.reason());
    assertTrue(
        e.clientMessage().startsWith("token not valid before 2026-03-01T12:05:00Z"),
        e.clientMessage());
  }

  @Test
  void jwt_wrongIssuer_refused() {
    AuthFailure e = refused(fx.token(c -> c.issuer("https://evil.test")));
    assertEquals(Reason.WRONG_ISSUER, e.reason());
    assertTrue(e.clientMessage().startsWith("wrong issuer"));
  }

  @Test
  void jwt_wrongAudience_refused() {
    AuthFailure e = refused(fx.token(c -> c.audience("some-other-app")));
    assertEquals(Reason.WRONG_AUDIENCE, e.reason());
    assertTrue(e.clientMessage().startsWith("wrong audience"));
  }

  @Test
  void jwt_algNone_refused() {
    AuthFailure e = refused(new PlainJWT(fx.claims().build()).serialize());
    assertEquals(Reason.ALG_NONE, e.reason());
  }

  @Test
  void jwt_hs256SignedWithRsaPublicKeyBytes_refused() throws Exception {
    // The classic key-confusion attack: the public key is public, so anyone can compute this MAC.
    SignedJWT forged =
        new SignedJWT(
            new JWSHeader.Builder(JWSAlgorithm.HS256).keyID("k1").build(), fx.claims().build());
    forged.sign(new MACSigner(AuthFixture.k1().toRSAPublicKey().getEncoded()));
    AuthFailure e = refused(forged.serialize());
    assertEquals(Reason.ALG_NOT_ALLOWED, e.reason());
    assertTrue(e.clientMessage().startsWith("token algorithm HS256 is not accepted"));
  }

  @Test
  void jwt_unknownKid_refused() {
    AuthFailure e = refused(AuthFixture.sign(AuthFixture.k2(), fx.claims().build()));
    assertEquals(Reason.UNKNOWN_KEY, e.reason());
    assertEquals("token signed with an unknown key (kid k2)", e.clientMessage());
  }

  @Test
  void jwt_badSignature_refused() {
    // Right kid, wrong key.
    AuthFailure e = refused(AuthFixture.sign(AuthFixture.k2(), "k1", fx.claims().build()));
    assertEquals(Reason.BAD_SIGNATURE, e.reason());
  }

  @Test
  void jwt_tamperedClaims_badSignature() {
    String[] parts = fx.token().split("\\.");
    String evil =
        com.nimbusds.jose.util.Base64URL.encode(fx.claims().subject("root").build().toString())
            .toString();
    AuthFailure e = refused(parts[0] + "." + evil + "." + parts[2]);
    assertEquals(Reason.BAD_SIGNATURE, e.reason());
  }

  @Test
  void jwt_truncated_refused() {
    String token = fx.token();
    AuthFailure half = refused(token.substring(0, token.indexOf('.') + 10));
    assertEquals(Reason.MALFORMED_TOKEN, half.reason());
    AuthFailure shortSig = refused(token.substring(0, token.length() - 8));
    assertEquals(Reason.BAD_SIGNATURE, shortSig.reason());
  }

  @Test
  void jwt_64KiB_refused() {
    AuthFailure e = refused(fx.token(c -> c.claim("pad", "x".repeat(64 * 1024))));
    assertEquals(Reason.TOKEN_TOO_LONG, e.reason());
  }

  @Test
  void headers_twoAuthorization_refused() {
    Metadata headers = AuthFixture.bearer(fx.token());
    headers.put(BearerTokens.AUTHORIZATION, "Bearer " + fx.token(c -> c.subject("bob")));
    assertEquals(Reason.TWO_CREDENTIALS, refused(headers).reason());
  }

  @Test
  void headers_authorizationAndAuthenticationDiffer_refused() {
    Metadata headers = AuthFixture.bearer(fx.token());
    headers.put(BearerTokens.AUTHENTICATION, "Bearer " + fx.token(c -> c.subject("bob")));
    assertEquals(Reason.TWO_CREDENTIALS, refused(headers).reason());
  }

  @Test
  void headers_emptyBearer_refused() {
    Metadata headers = new Metadata();
    headers.put(BearerTokens.AUTHORIZATION, "Bearer ");
    AuthFailure e = refused(headers);
    assertEquals(Reason.EMPTY_TOKEN, e.reason());
    assertEquals("empty Bearer token: pass token=... in the sc:// URL", e.clientMessage());
  }

  @Test
  void headers_basicScheme_refused() {
    Metadata headers = new Metadata();
    headers.put(BearerTokens.AUTHORIZATION, "Basic YWxpY2U6cHc=");
    assertEquals(Reason.BAD_HEADER, refused(headers).reason());
  }

  @Test
  void headers_none_noTokenHint() {
    AuthFailure e = refused(new Metadata());
    assertEquals(Reason.NO_CREDENTIALS, e.reason());
    assertEquals("no token: pass token=... in the sc:// URL", e.clientMessage());
  }

  @Test
  void jwt_missingExp_refused() {
    assertEquals(Reason.MISSING_CLAIM, refused(fx.token(c -> c.expirationTime(null))).reason());
  }

  @Test
  void jwt_lifetimeAndRequiredClaims_enforced() throws Exception {
    auth =
        fx.authenticator(
            fx.config(
                AuthFixture.JWT_FILE
                    + "    max_lifetime: 1h\n    required_claims: [email]\n  token_cache:\n    max_entries: 0\n"));
    AuthFailure noEmail = refused(fx.token());
    assertEquals(Reason.MISSING_CLAIM, noEmail.reason());
    assertEquals("token lacks the required claim 'email'", noEmail.clientMessage());
    Instant now = fx.time.instant();
    AuthFailure longLived =
        refused(
            fx.token(
                c ->
                    c.claim("email", "a@x")
                        .expirationTime(Date.from(now.plus(Duration.ofDays(1))))));
    assertEquals(Reason.LIFETIME_TOO_LONG, longLived.reason());
    assertEquals(
        "alice",
        auth.authenticate(AuthFixture.bearer(fx.token(c -> c.claim("email", "a@x"))), null, null)
            .name());
  }

  @Test
  void jwt_jti_isThePrincipalsTokenId_soThatOneTokenCanBeRevoked() throws Exception {
    auth = fx.authenticator(fx.config(AuthFixture.JWT_FILE));
    Principal withId =
        auth.authenticate(AuthFixture.bearer(fx.token(c -> c.jwtID("t-77"))), null, null);
    assertEquals(Optional.of("t-77"), withId.tokenId());
    // From the cache too: the second call of a token is not verified again.
    assertEquals(
        Optional.of("t-77"),
        auth.authenticate(AuthFixture.bearer(fx.token(c -> c.jwtID("t-77"))), null, null)
            .tokenId());
    assertEquals(
        Optional.empty(), auth.authenticate(AuthFixture.bearer(fx.token()), null, null).tokenId());
  }

  @Test
  void jwt_badToken_neverDowngradedToAnonymous() throws Exception {
    auth = fx.authenticator(fx.config(AuthFixture.JWT_FILE + "  anonymous: fallback\n"));
    assertEquals(
        Principal.Method.ANONYMOUS, auth.authenticate(new Metadata(), null, null).method());
    assertEquals(
        Reason.BAD_SIGNATURE,
        refused(AuthFixture.sign(AuthFixture.k2(), "k1", fx.claims().build())).reason());
  }

  @Test
  void disabled_everyoneIsUnauthenticatedNone() throws Exception {
    auth = fx.authenticator(io.sparkgate.config.AuthConfig.disabled()); // only code can ask for it
    Principal p = auth.authenticate(new Metadata(), null, null);
    assertEquals(Principal.Method.NONE, p.method());
    assertFalse(p.clientCertSubject().isPresent());
  }
}
