package io.sparkgate.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyType;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads the keys configured as files. Read once at start: a file that cannot be used stops the proxy with
 * the key and the file named, rather than failing every call later.
 */
final class KeyFiles {
  /** RFC 7518 3.2: an HMAC key must be at least as long as the hash; nimbus refuses shorter ones too. */
  static final int MIN_HMAC_BYTES = 32;

  private KeyFiles() {}

  static KeySource load(AuthConfig.Jwt jwt) {
    List<JWK> keys = new ArrayList<>();
    jwt.jwksFile().ifPresent(file -> keys.addAll(jwksFile(file)));
    for (Path pem : jwt.publicKeyFiles()) {
      keys.add(pem(pem));
    }
    jwt.hmacSecretFile().ifPresent(file -> keys.add(hmac(file)));
    List<JWK> all = List.copyOf(keys);
    return () -> all;
  }

  private static List<JWK> jwksFile(Path file) {
    try {
      JWKSet set = JWKSet.parse(Files.readString(file));
      List<JWK> out = new ArrayList<>();
      for (JWK key : set.getKeys()) {
        if (KeyType.OCT.equals(key.getKeyType())) {
          throw new ConfigException(
              "auth.jwt.jwks_file: "
                  + file
                  + " holds a symmetric key (kty oct); "
                  + "HMAC secrets belong in auth.jwt.hmac_secret_file");
        }
        // Only the public half is ever needed; never keep a private key an operator pasted by
        // mistake.
        out.add(key.toPublicJWK());
      }
      if (out.isEmpty()) {
        throw new ConfigException("auth.jwt.jwks_file: " + file + " holds no keys");
      }
      return out;
    } catch (IOException | ParseException e) {
      throw new ConfigException(
          "auth.jwt.jwks_file: " + file + " is not a JWK set: " + e.getMessage(), e);
    }
  }

  private static JWK pem(Path file) {
    try {
      JWK key = JWK.parseFromPEMEncodedObjects(Files.readString(file));
      if (!KeyType.RSA.equals(key.getKeyType()) && !KeyType.EC.equals(key.getKeyType())) {
        throw new ConfigException(
            "auth.jwt.public_key_files: " + file + " is not an RSA or EC key");
      }
      return key.toPublicJWK();
    } catch (IOException | JOSEException | RuntimeException e) {
      if (e instanceof ConfigException c) {
        throw c;
      }
      throw new ConfigException(
          "auth.jwt.public_key_files: "
              + file
              + " is not a PEM public key or certificate (-----BEGIN PUBLIC KEY----- or -----BEGIN CERTIFICATE-----)",
          e);
    }
  }

  private static JWK hmac(Path file) {
    byte[] secret;
    try {
      secret = Files.readString(file).strip().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ConfigException(
          "auth.jwt.hmac_secret_file: cannot read " + file + ": " + e.getMessage(), e);
    }
    if (secret.length < MIN_HMAC_BYTES) {
      throw new ConfigException(
          "auth.jwt.hmac_secret_file: "
              + file
              + " holds "
              + secret.length
              + " bytes; an HMAC secret needs at least "
              + MIN_HMAC_BYTES
              + " (openssl rand -base64 48)");
    }
    return new OctetSequenceKey.Builder(secret).build();
  }
}
