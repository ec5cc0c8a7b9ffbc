package io.sparkgate.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.factories.DefaultJWSVerifierFactory;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.KeyType;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.EncryptedJWT;
import com.nimbusds.jwt.JWT;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import io.sparkgate.auth.AuthFailure.Reason;
import io.sparkgate.call.Principal;
import io.sparkgate.call.SparkError;
import io.sparkgate.config.AuthConfig;
import java.security.Key;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Optional;

/**
 * Verifies a JWT and turns its claims into a {@link Principal}. The steps are spelled out here rather than
 * left to nimbus's {@code DefaultJWTProcessor} so that each refusal has its own reason and an actionable
 * message, and so that nothing about the claims is reported before the signature has been checked.
 */
final class JwtVerifier {
  /** Spark puts user_id into job tags and logs; a principal is a name, not a document. */
  static final int MAX_PRINCIPAL_CHARS = 256;

  private final AuthConfig.Jwt config;
  private final List<KeySource> keys;
  private final Clock clock;
  private final DefaultJWSVerifierFactory verifiers = new DefaultJWSVerifierFactory();

  JwtVerifier(AuthConfig.Jwt config, List<KeySource> keys, Clock clock) {
    this.config = config;
    this.keys = List.copyOf(keys);
    this.clock = clock;
  }

  /** A verified token: who it names and when it stops being valid. */
  record Verified(Principal principal, Instant expires) {}

  Verified verify(String token) throws AuthFailure {
    SignedJWT jwt = parse(token);
    JWSHeader header = jwt.getHeader();
    String alg = header.getAlgorithm().getName();
    if (!config.algorithms().contains(alg)) {
      throw new AuthFailure(
          Reason.ALG_NOT_ALLOWED,
          "token algorithm "
              + SparkError.printable(alg)
              + " is not accepted (accepted: "
              + String.join(", ", new java.util.TreeSet<>(config.algorithms()))
              + ")");
    }
    checkSignature(jwt);
    JWTClaimsSet claims = claims(jwt);
    return new Verified(principal(claims), claims.getExpirationTime().toInstant());
  }

  private static SignedJWT parse(String token) throws AuthFailure {
    JWT parsed;
    try {
      parsed = JWTParser.parse(token);
    } catch (ParseException | RuntimeException e) {
      throw new AuthFailure(
          Reason.MALFORMED_TOKEN,
          "malformed token: not a JWT (header.payload.signature)",
          "unparseable JWT: " + e.getClass().getSimpleName());
    }
    if (parsed instanceof PlainJWT) {
      throw new AuthFailure(Reason.ALG_NONE, "unsigned token (alg none) is never accepted");
    }
    if (parsed instanceof EncryptedJWT) {
      throw new AuthFailure(
          Reason.MALFORMED_TOKEN, "encrypted tokens (JWE) are not supported: send a signed JWT");
    }
    return (SignedJWT) parsed;
  }

  private void checkSignature(SignedJWT jwt) throws AuthFailure {
    JWSHeader header = jwt.getHeader();
    List<JWK> candidates = matching(header, false);
    if (candidates.isEmpty()) {
      candidates = matching(header, true);
    }
    if (candidates.isEmpty()) {
      if (keys.stream().allMatch(k -> k.keys().isEmpty())) {
        throw new AuthFailure(
            Reason.NO_KEYS,
            "Sparkgate has no signing keys yet (the identity provider is unreachable); retry later");
      }
      String kid = header.getKeyID() == null ? "(none)" : SparkError.printable(header.getKeyID());
      throw new AuthFailure(
          Reason.UNKNOWN_KEY, "token signed with an unknown key (kid " + kid + ")");
    }
    for (JWK jwk : candidates) {
      try {
        JWSVerifier verifier = verifiers.createJWSVerifier(header, javaKey(jwk));
        if (jwt.verify(verifier)) {
          return;
        }
      } catch (JOSEException | IllegalStateException e) {
        // The key does not fit the algorithm (wrong curve, too short): try the next candidate.
      }
    }
    throw new AuthFailure(Reason.BAD_SIGNATURE, "bad token signature");
  }

  /** Keys usable for this header: same family as the alg, same kid when the token names one. */
  private List<JWK> matching(JWSHeader header, boolean afterMiss) {
    JWSAlgorithm alg = header.getAlgorithm();
    KeyType type =
        JWSAlgorithm.Family.RSA.contains(alg)
            ? KeyType.RSA
            : JWSAlgorithm.Family.EC.contains(alg)
                ? KeyType.EC
                : JWSAlgorithm.Family.HMAC_SHA.contains(alg) ? KeyType.OCT : null;
    List<JWK> out = new ArrayList<>();
    if (type == null) {
      return out;
    }
    for (KeySource source : keys) {
      for (JWK key : afterMiss ? source.keysAfterMiss() : source.keys()) {
        if (!key.getKeyType().equals(type)) {
          continue;
        }
        // A key without a kid (from a PEM file or the HMAC secret) applies to any token of its
        // type.
        if (header.getKeyID() != null
            && key.getKeyID() != null
            && !header.getKeyID().equals(key.getKeyID())) {
          continue;
        }
        if (key.getAlgorithm() != null && !key.getAlgorithm().equals(alg)) {
          continue;
        }
        if (key.getKeyUse() != null && !KeyUse.SIGNATURE.equals(key.getKeyUse())) {
          continue;
        }
        out.add(key);
      }
    }
    return out;
  }

  private static Key javaKey(JWK jwk) throws JOSEException {
    if (jwk instanceof RSAKey rsa) {
      return rsa.toRSAPublicKey();
    }
    if (jwk instanceof ECKey ec) {
      return ec.toECPublicKey();
    }
    if (jwk instanceof OctetSequenceKey oct) {
      return oct.toSecretKey();
    }
    throw new JOSEException("unsupported key type " + jwk.getKeyType());
  }

  private JWTClaimsSet claims(SignedJWT jwt) throws AuthFailure {
    JWTClaimsSet claims;
    try {
      claims = jwt.getJWTClaimsSet();
    } catch (ParseException e) {
      throw new AuthFailure(
          Reason.MALFORMED_TOKEN, "malformed token: the claims are not a JSON object");
    }
    Instant now = clock.instant();
    Duration skew = config.clockSkew();
    Instant exp = instant(claims.getExpirationTime());
    if (exp == null) {
      throw new AuthFailure(
          Reason.MISSING_CLAIM,
          "token has no expiry (exp): Sparkgate only accepts tokens that expire");
    }
    if (now.isAfter(exp.plus(skew))) {
      throw new AuthFailure(
          Reason.EXPIRED,
          "token expired at " + exp.truncatedTo(ChronoUnit.SECONDS) + ": get a new one");
    }
    Instant nbf = instant(claims.getNotBeforeTime());
    if (nbf != null && now.isBefore(nbf.minus(skew))) {
      throw new AuthFailure(
          Reason.NOT_YET_VALID,
          "token not valid before "
              + nbf.truncatedTo(ChronoUnit.SECONDS)
              + " (check the client's clock)");
    }
    Instant iat = instant(claims.getIssueTime());
    if (iat != null && now.isBefore(iat.minus(skew))) {
      throw new AuthFailure(
          Reason.NOT_YET_VALID,
          "token issued in the future ("
              + iat.truncatedTo(ChronoUnit.SECONDS)
              + "); check the identity provider's clock");
    }
    if (!config.issuer().equals(claims.getIssuer())) {
      throw new AuthFailure(
          Reason.WRONG_ISSUER,
          "wrong issuer: Sparkgate accepts tokens from " + config.issuer(),
          "wrong issuer " + SparkError.printable(String.valueOf(claims.getIssuer())));
    }
    List<String> aud = claims.getAudience();
    if (aud == null || aud.stream().noneMatch(config.audience()::contains)) {
      throw new AuthFailure(
          Reason.WRONG_AUDIENCE,
          "wrong audience: the token must be issued for " + String.join(" or ", config.audience()),
          "wrong audience " + SparkError.printable(String.valueOf(aud)));
    }
    if (config.maxLifetime().isPresent()) {
      Instant start = iat != null ? iat : nbf;
      if (start == null) {
        throw new AuthFailure(
            Reason.MISSING_CLAIM, "token has no iat: auth.jwt.max_lifetime needs it");
      }
      Duration lifetime = Duration.between(start, exp);
      if (lifetime.compareTo(config.maxLifetime().get()) > 0) {
        throw new AuthFailure(
            Reason.LIFETIME_TOO_LONG,
            "token lifetime "
                + lifetime
                + " exceeds the "
                + config.maxLifetime().get()
                + " Sparkgate accepts: request a shorter-lived token");
      }
    }
    for (String name : config.requiredClaims()) {
      if (claims.getClaim(name) == null) {
        throw new AuthFailure(
            Reason.MISSING_CLAIM, "token lacks the required claim '" + name + "'");
      }
    }
    return claims;
  }

  private Principal principal(JWTClaimsSet claims) throws AuthFailure {
    Object name = claims.getClaim(config.principalClaim());
    if (!(name instanceof String s)
        || s.isBlank()
        || s.length() > MAX_PRINCIPAL_CHARS
        || !SparkError.printable(s).equals(s)) {
      throw new AuthFailure(
          Reason.BAD_CLAIM,
          "token's '"
              + config.principalClaim()
              + "' claim must be a non-empty printable string of at most "
              + MAX_PRINCIPAL_CHARS
              + " characters");
    }
    List<String> groups = List.of();
    if (config.groupsClaim().isPresent()) {
      groups = groups(claims.getClaim(config.groupsClaim().get()), config.groupsClaim().get());
    }
    Optional<String> tenant = Optional.empty();
    if (config.tenantClaim().isPresent()) {
      Object t = claims.getClaim(config.tenantClaim().get());
      if (t != null && !(t instanceof String)) {
        throw new AuthFailure(
            Reason.BAD_CLAIM,
            "token's '" + config.tenantClaim().get() + "' claim must be a string");
      }
      tenant = Optional.ofNullable((String) t).filter(x -> !x.isBlank());
    }
    return new Principal(
        s,
        groups,
        tenant,
        Principal.Method.JWT,
        Optional.empty(),
        Optional.ofNullable(claims.getJWTID()).filter(id -> !id.isBlank()));
  }

  /** Keycloak and most IdPs send a JSON array; OAuth scopes-style IdPs a space-separated string. */
  private static List<String> groups(Object value, String claim) throws AuthFailure {
    if (value == null) {
      return List.of();
    }
    if (value instanceof String s) {
      return Arrays.stream(s.trim().split("\\s+")).filter(g -> !g.isEmpty()).toList();
    }
    if (value instanceof List<?> list) {
      List<String> out = new ArrayList<>();
      for (Object item : list) {
        if (!(item instanceof String g)) {
          throw new AuthFailure(
              Reason.BAD_CLAIM, "token's '" + claim + "' claim must be a list of strings");
        }
        out.add(g);
      }
      return out;
    }
    throw new AuthFailure(
        Reason.BAD_CLAIM,
        "token's '" + claim + "' claim must be a list or a space-separated string");
  }

  private static Instant instant(Date date) {
    return date == null ? null : date.toInstant();
  }
}
