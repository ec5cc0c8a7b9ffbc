package io.sparkgate.auth;

import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.Metadata;
import io.sparkgate.call.Principal;
import io.sparkgate.config.AuthConfig;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLSession;

/**
 * Tries the configured methods in order; the first that accepts the call names its principal.
 *
 * <p>A presented credential must verify: a bad token is never downgraded to anonymous, and when no method
 * accepts, the refusal comes from the method that understood the credential best (a JWT-shaped token gets
 * the JWT verifier's reason rather than "unknown static token").
 */
final class Authenticator {
  private final AuthConfig config;
  private final JwtVerifier jwt;
  private final TokenCache cache;
  private final StaticTokens staticTokens;
  private final ClientCertIdentity clientCert;

  Authenticator(AuthConfig config, List<KeySource> keys, Clock clock, Ticker ticker) {
    this.config = config;
    this.jwt = config.jwt().map(j -> new JwtVerifier(j, keys, clock)).orElse(null);
    this.cache =
        new TokenCache(
            config.tokenCache().maxEntries(), config.tokenCache().maxAge(), clock, ticker);
    this.staticTokens = new StaticTokens(config.staticTokens());
    this.clientCert = config.clientCert().map(ClientCertIdentity::new).orElse(null);
  }

  /** The caller of a call on a connection whose last token is {@code last} (null: none yet). */
  Principal authenticate(Metadata headers, SSLSession tls, TokenCache.LastToken last)
      throws AuthFailure {
    if (!config.enabled()) {
      return Principal.anonymous(Principal.Method.NONE);
    }
    Optional<String> token = BearerTokens.extract(headers);
    Optional<X509Certificate> cert = ClientCertIdentity.leaf(tls);
    List<AuthFailure> refusals = new ArrayList<>();
    for (AuthConfig.Method method : config.methods()) {
      try {
        Principal p =
            switch (method) {
              case JWT ->
                  token.isPresent() ? cache.get(token.get(), jwt::verify, last).principal() : null;
              case STATIC_TOKENS ->
                  token.isPresent() ? staticTokens.authenticate(token.get()) : null;
              case CLIENT_CERT -> cert.isPresent() ? clientCert.authenticate(cert.get()) : null;
              // A caller who sent a credential wants to be someone: never let a bad one pass as
              // anonymous.
              case ANONYMOUS ->
                  token.isEmpty() ? Principal.anonymous(Principal.Method.ANONYMOUS) : null;
            };
        if (p != null) {
          return cert.isPresent() && p.clientCertSubject().isEmpty()
              ? new Principal(
                  p.name(),
                  p.groups(),
                  p.tenant(),
                  p.method(),
                  Optional.of(cert.get().getSubjectX500Principal().getName()),
                  p.tokenId())
              : p;
        }
      } catch (AuthFailure e) {
        refusals.add(e);
      }
    }
    if (refusals.isEmpty()) {
      throw new AuthFailure(AuthFailure.Reason.NO_CREDENTIALS, noCredentialsHint());
    }
    throw mostSpecific(refusals);
  }

  private static AuthFailure mostSpecific(List<AuthFailure> refusals) {
    for (AuthFailure e : refusals) {
      if (e.reason() != AuthFailure.Reason.UNKNOWN_TOKEN
          && e.reason() != AuthFailure.Reason.MALFORMED_TOKEN) {
        return e;
      }
    }
    for (AuthFailure e : refusals) {
      if (e.reason() == AuthFailure.Reason.UNKNOWN_TOKEN) {
        return e;
      }
    }
    return refusals.get(0);
  }

  private String noCredentialsHint() {
    boolean tokens =
        config.methods().contains(AuthConfig.Method.JWT)
            || config.methods().contains(AuthConfig.Method.STATIC_TOKENS);
    if (tokens) {
      return "no token: pass token=... in the sc:// URL";
    }
    return "no client certificate: this proxy requires mutual TLS with a certificate from its client CA";
  }
}
