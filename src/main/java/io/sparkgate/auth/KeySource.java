package io.sparkgate.auth;

import com.nimbusds.jose.jwk.JWK;
import java.util.List;

/** Where JWT verification keys come from: files read once at start, or a remote JWKS kept fresh. */
interface KeySource {
  /** The keys to try now. */
  List<JWK> keys();

  /**
   * The keys after no key matched a token's {@code kid}: a remote source may fetch again (rate limited, so a
   * flood of tokens with invented kids cannot turn the proxy into a load generator against the IdP).
   */
  default List<JWK> keysAfterMiss() {
    return keys();
  }
}
