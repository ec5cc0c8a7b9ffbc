package io.sparkgate.auth;

import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.ServerInterceptor;
import io.grpc.ServerTransportFilter;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.CallHooks;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Authentication and identity for one proxy: an interceptor that establishes each call's {@link Principal}
 * and call hooks that stamp it onto every request and keep configuration secrets out of responses. Register
 * {@link #interceptor()} on the server and put {@link #hooks()} first in the forwarding pipeline.
 */
public final class Authentication {
  private static final Logger log = LoggerFactory.getLogger(Authentication.class);

  private final AuthInterceptor interceptor;
  private final CallHook.Factory hooks;
  private final AuthFailures failures;
  private final List<RemoteJwks> remote;

  private Authentication(AuthInterceptor interceptor, CallHook.Factory hooks, AuthFailures failures, List<RemoteJwks> remote) {
    this.interceptor = interceptor;
    this.hooks = hooks;
    this.failures = failures;
    this.remote = remote;
  }

  /** Loads keys (a remote JWKS is fetched once now; failing that, on first use) and builds the pieces. */
  public static Authentication create(AuthConfig config) {
    return create(config, Clock.systemUTC(), Ticker.systemTicker());
  }

  static Authentication create(AuthConfig config, Clock clock, Ticker ticker) {
    List<KeySource> keys = new ArrayList<>();
    List<RemoteJwks> remote = new ArrayList<>();
    config.jwt().ifPresent(jwt -> {
      if (jwt.jwksFile().isPresent() || !jwt.publicKeyFiles().isEmpty() || jwt.hmacSecretFile().isPresent()) {
        keys.add(KeyFiles.load(jwt));
      }
      if (jwt.jwksUrl().isPresent() || jwt.oidcDiscoveryUrl().isPresent()) {
        RemoteJwks jwks = new RemoteJwks(jwt, clock).start();
        keys.add(jwks);
        remote.add(jwks);
      }
    });
    if (config.enabled()) {
      log.info("authentication: {} (in this order); user_id mismatch: {}",
          config.methods().stream().map(m -> m.name().toLowerCase(java.util.Locale.ROOT)).toList(),
          config.userIdMismatch().name().toLowerCase(java.util.Locale.ROOT));
      if (config.methods().contains(AuthConfig.Method.ANONYMOUS)) {
        log.warn("auth.anonymous is true: callers without credentials are accepted as user 'anonymous'");
      }
    } else {
      log.warn("NO AUTHENTICATION: the configuration has no auth section, so every client is accepted and the "
          + "user_id it declares reaches Spark unchecked (anyone who learns a session_id can use that session). "
          + "Add an auth section; proxy/sparkgate.yaml shows each method.");
    }
    AuthFailures failures = new AuthFailures();
    Authenticator authenticator = new Authenticator(config, keys, clock, ticker);
    CallHook.Factory hooks = CallHooks.chain(List.of(
        new IdentityHooks(new UserContextRewriter(config.userIdMismatch())),
        new SecretRedaction(new SecretPatterns(config.secretPatterns()))));
    return new Authentication(new AuthInterceptor(authenticator, failures), hooks, failures, List.copyOf(remote));
  }

  /** Authenticates every call; register it on the client-facing server. */
  public ServerInterceptor interceptor() {
    return interceptor;
  }

  /** Per-connection state the interceptor uses (the last token verified); register it on the same server. */
  public ServerTransportFilter transportFilter() {
    return AuthInterceptor.CONNECTIONS;
  }

  /** Identity propagation and secret redaction; they refuse calls the interceptor did not authenticate. */
  public CallHook.Factory hooks() {
    return hooks;
  }

  /** Calls refused, by reason (every reason, zero until it happens), for metrics. */
  public Map<String, Long> refusals() {
    Map<String, Long> out = new LinkedHashMap<>();
    failures.snapshot().forEach((reason, n) -> out.put(reason.name(), n));
    return out;
  }

  /** JWKS fetches that failed (the last good keys stayed in use), for metrics. */
  public long jwksFetchFailures() {
    return remote.stream().mapToLong(RemoteJwks::fetchFailures).sum();
  }

  /** Whether keys come from a JWKS URL (so {@link #jwksFetchFailures()} can grow). */
  public boolean fetchesJwks() {
    return !remote.isEmpty();
  }
}
