package io.sparkgate.auth;

import io.sparkgate.call.Principal;
import io.sparkgate.config.AuthConfig;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Pre-shared tokens, looked up by their SHA-256 (the configuration never holds a token). A lookup by hash
 * leaks nothing through timing that helps forge a token: the attacker would need a SHA-256 preimage.
 */
final class StaticTokens {
  private final Map<String, Principal> byHash = new HashMap<>();

  StaticTokens(Iterable<AuthConfig.StaticToken> tokens) {
    for (AuthConfig.StaticToken t : tokens) {
      byHash.put(
          t.sha256(),
          new Principal(
              t.principal(),
              t.groups(),
              t.tenant(),
              Principal.Method.STATIC_TOKEN,
              Optional.empty()));
    }
  }

  Principal authenticate(String token) throws AuthFailure {
    Principal p = byHash.get(Hashes.sha256Hex(token));
    if (p == null) {
      throw new AuthFailure(
          AuthFailure.Reason.UNKNOWN_TOKEN, "unknown token: check token=... in the sc:// URL");
    }
    return p;
  }
}
