package io.sparkgate.auth;

import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.ServerTransportFilter;
import io.sparkgate.call.Stage;
import io.sparkgate.config.AuthConfig;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Authentication and identity for one proxy: the authenticate {@link #stage()}, which establishes each call's
 * principal, and the counters the metrics show. Register {@link #transportFilter()} on the server.
 */
public final class Authentication {
  private static final Logger log = LoggerFactory.getLogger(Authentication.class);

  private final Authenticate stage;
  private final AuthFailures failures;
  private final List<RemoteJwks> remote;
  private final boolean anonymousFallback;

  private Authentication(
      Authenticate stage, AuthFailures failures, List<RemoteJwks> remote, boolean fallback) {
    this.stage = stage;
    this.failures = failures;
    this.remote = remote;
    this.anonymousFallback = fallback;
  }

  /** Loads keys (a remote JWKS is fetched once now; failing that, on first use) and builds the pieces. */
  public static Authentication create(AuthConfig config) {
    return create(config, Clock.systemUTC(), Ticker.systemTicker());
  }

  static Authentication create(AuthConfig config, Clock clock, Ticker ticker) {
    List<KeySource> keys = new ArrayList<>();
    List<RemoteJwks> remote = new ArrayList<>();
    config
        .jwt()
        .ifPresent(
            jwt -> {
              if (jwt.jwksFile().isPresent()
                  || !jwt.publicKeyFiles().isEmpty()
                  || jwt.hmacSecretFile().isPresent()) {
                keys.add(KeyFiles.load(jwt));
              }
              if (jwt.jwksUrl().isPresent() || jwt.oidcDiscoveryUrl().isPresent()) {
                RemoteJwks jwks = new RemoteJwks(jwt, clock).start();
                keys.add(jwks);
                remote.add(jwks);
              }
            });
    if (config.enabled()) {
      log.info(
          "authentication: {} (in this order); user_id mismatch: {}",
          config.methods().stream().map(m -> m.name().toLowerCase(java.util.Locale.ROOT)).toList(),
          config.userIdMismatch().name().toLowerCase(java.util.Locale.ROOT));
      if (config.anonymousFallback()) {
        log.warn(
            "auth.anonymous is fallback: callers without credentials are accepted as user"
                + " 'anonymous' beside {}",
            config.methods().stream().filter(m -> m != AuthConfig.Method.ANONYMOUS).toList());
      } else if (config.methods().contains(AuthConfig.Method.ANONYMOUS)) {
        log.warn(
            "auth.anonymous is true: callers without credentials are accepted as user 'anonymous'");
      }
    } else {
      log.warn(
          "NO AUTHENTICATION: the configuration has no auth section, so every client is accepted and the "
              + "user_id it declares reaches Spark unchecked (anyone who learns a session_id can use that session). "
              + "Add an auth section; proxy/sparkgate.yaml shows each method.");
    }
    AuthFailures failures = new AuthFailures();
    Authenticator authenticator = new Authenticator(config, keys, clock, ticker);
    Authenticate stage = new Authenticate(authenticator, failures);
    return new Authentication(stage, failures, List.copyOf(remote), config.anonymousFallback());
  }

  /** The first stage of every call: who is calling (the head stage stamps it onto every request). */
  public Stage stage() {
    return stage;
  }

  /** Per-connection state the stage uses (the last token verified); register it on the client-facing server. */
  public ServerTransportFilter transportFilter() {
    return Authenticate.CONNECTIONS;
  }

  /** Calls refused, by reason (every reason, zero until it happens), for metrics. */
  public Map<String, Long> refusals() {
    Map<String, Long> out = new LinkedHashMap<>();
    failures.snapshot().forEach((reason, n) -> out.put(reason.name(), n));
    return out;
  }

  /** Whether callers without credentials are let in as 'anonymous' beside other methods. */
  public boolean anonymousFallback() {
    return anonymousFallback;
  }

  /** Calls let in as 'anonymous' (alone or as the fallback), for metrics. */
  public long anonymousCalls() {
    return stage.anonymousCalls();
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
