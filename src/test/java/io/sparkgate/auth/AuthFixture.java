package io.sparkgate.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.grpc.Metadata;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.testing.FakeTime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.function.UnaryOperator;

/** Keys, tokens and configurations for the auth tests; everything is generated, nothing is checked in. */
final class AuthFixture {
  static final String ISSUER = "https://idp.test/realms/spark";
  static final String AUDIENCE = "sparkgate";
  private static final RSAKey K1 = generate("k1");
  private static final RSAKey K2 = generate("k2");

  final FakeTime time = new FakeTime();
  final Path dir;

  AuthFixture(Path dir) {
    this.dir = dir;
  }

  static RSAKey k1() {
    return K1;
  }

  static RSAKey k2() {
    return K2;
  }

  static RSAKey generate(String kid) {
    try {
      return new RSAKeyGenerator(2048).keyID(kid).generate();
    } catch (JOSEException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Claims valid now for alice, with groups and tenant. */
  JWTClaimsSet.Builder claims() {
    Instant now = time.instant();
    return new JWTClaimsSet.Builder()
        .issuer(ISSUER)
        .audience(AUDIENCE)
        .subject("alice")
        .issueTime(Date.from(now))
        .notBeforeTime(Date.from(now))
        .expirationTime(Date.from(now.plus(Duration.ofMinutes(10))))
        .claim("groups", List.of("analysts", "eng"))
        .claim("tenant", "acme");
  }

  static String sign(RSAKey key, JWTClaimsSet claims) {
    return sign(key, key.getKeyID(), claims);
  }

  static String sign(RSAKey key, String kid, JWTClaimsSet claims) {
    try {
      SignedJWT jwt =
          new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(kid).build(), claims);
      jwt.sign(new RSASSASigner(key));
      return jwt.serialize();
    } catch (JOSEException e) {
      throw new IllegalStateException(e);
    }
  }

  String token() {
    return sign(K1, claims().build());
  }

  String token(UnaryOperator<JWTClaimsSet.Builder> change) {
    return sign(K1, change.apply(claims()).build());
  }

  static Metadata bearer(String token) {
    Metadata headers = new Metadata();
    headers.put(BearerTokens.AUTHORIZATION, "Bearer " + token);
    return headers;
  }

  /** A proxy configuration with this auth section (indented two spaces under auth:). */
  AuthConfig config(String authBody) throws IOException {
    Files.writeString(dir.resolve("jwks.json"), new JWKSet(K1.toPublicJWK()).toString());
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(
        file,
        "listen:\n  plaintext: true\n  address: 127.0.0.1\nbackend:\n  address: localhost:15002\n"
            + "auth:\n"
            + authBody);
    return ProxyConfig.load(file).auth();
  }

  static final String JWT_FILE =
      "  jwt:\n    jwks_file: jwks.json\n    issuer: "
          + ISSUER
          + "\n    audience: "
          + AUDIENCE
          + "\n"
          + "    groups_claim: groups\n    tenant_claim: tenant\n";

  Authenticator authenticator(AuthConfig config) {
    List<KeySource> keys =
        config.jwt().isPresent() ? List.of(KeyFiles.load(config.jwt().get())) : List.of();
    return new Authenticator(config, keys, time, time);
  }
}
