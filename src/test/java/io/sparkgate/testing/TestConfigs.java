package io.sparkgate.testing;

import io.sparkgate.config.AdminConfig;
import io.sparkgate.config.AuditConfig;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.BackendConfig;
import io.sparkgate.config.BackendProfileConfig;
import io.sparkgate.config.HealthConfig;
import io.sparkgate.config.LimitsConfig;
import io.sparkgate.config.ListenConfig;
import io.sparkgate.config.MatchConfig;
import io.sparkgate.config.PolicyConfig;
import io.sparkgate.config.PoolConfig;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.config.QuotasConfig;
import io.sparkgate.config.RouteConfig;
import io.sparkgate.config.SessionsConfig;
import io.sparkgate.config.TlsConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Configurations built in code, for tests that start a proxy or an admin listener without a YAML file: what a
 * file naming only the parts given would load as, on free loopback ports.
 */
public final class TestConfigs {
  private TestConfigs() {}

  /**
   * A listener on a free loopback port: 1000 streams per connection, a one-minute keepalive, a one-second
   * shutdown grace, no drain delay, no client headers forwarded.
   */
  public static ListenConfig listen(
      boolean plaintext,
      long maxInboundMessageBytes,
      Duration handshakeTimeout,
      int eventLoops,
      Duration eventLoopSpin) {
    return new ListenConfig(
        "127.0.0.1",
        0,
        plaintext,
        maxInboundMessageBytes,
        1000,
        handshakeTimeout,
        Duration.ofMinutes(1),
        Duration.ofSeconds(1),
        eventLoops,
        eventLoopSpin,
        Duration.ZERO,
        List.of());
  }

  /** As above, one event loop per core that never spins. */
  public static ListenConfig listen(
      boolean plaintext, long maxInboundMessageBytes, Duration handshakeTimeout) {
    return listen(
        plaintext,
        maxInboundMessageBytes,
        handshakeTimeout,
        ListenConfig.defaultEventLoops(),
        Duration.ZERO);
  }

  /**
   * One plaintext backend everyone is routed to, sessions in memory, default health checks and limits; no
   * quotas, authentication, audit, policy or admin listener.
   */
  public static ProxyConfig proxy(
      ListenConfig listen, Optional<TlsConfig> tls, String backendHost, int backendPort) {
    BackendConfig backend =
        new BackendConfig(
            backendHost, backendPort, Optional.empty(), BackendProfileConfig.defaults());
    return new ProxyConfig(
        Path.of("test.yaml"),
        listen,
        tls,
        Map.of(PoolConfig.DEFAULT, PoolConfig.single(backend)),
        List.of(new RouteConfig(MatchConfig.ANYONE, PoolConfig.DEFAULT)),
        SessionsConfig.memory(),
        HealthConfig.defaults(),
        QuotasConfig.none(),
        AuthConfig.disabled(),
        AuditConfig.disabled(),
        PolicyConfig.disabled(),
        AdminConfig.disabled(),
        LimitsConfig.defaults(),
        Optional.empty());
  }

  /** An admin listener on loopback {@code port} (0: a free one) that asks for no credentials. */
  public static AdminConfig adminLoopback(int port) {
    return new AdminConfig(true, "127.0.0.1", port, "/metrics", Optional.empty(), Optional.empty());
  }
}
