package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The whole, validated configuration of one proxy. Built once at start from one YAML file; immutable.
 *
 * @param tls absent only when {@code listen.plaintext} is true
 * @param pools the backend pools by name, in file order; a file with {@code backend:} has one, {@code default}
 * @param routes which principals go to which pool, first match wins; never empty (one pool: everyone to it)
 * @param admin the admin listener (health, readiness, metrics, API, console); {@link AdminConfig#disabled()}
 *     without an admin (or metrics) section
 * @param limits connections and calls clients may hold at once; {@link LimitsConfig#defaults()} without a
 *     limits section
 * @param tracing OpenTelemetry traces; empty (off) without a tracing section
 */
public record ProxyConfig(
    Path source,
    ListenConfig listen,
    Optional<TlsConfig> tls,
    Map<String, PoolConfig> pools,
    List<RouteConfig> routes,
    SessionsConfig sessions,
    HealthConfig health,
    QuotasConfig quotas,
    AuthConfig auth,
    AuditConfig audit,
    PolicyConfig policy,
    AdminConfig admin,
    LimitsConfig limits,
    Optional<TracingConfig> tracing) {

  public ProxyConfig {
    pools = Collections.unmodifiableMap(new LinkedHashMap<>(pools));
    routes = List.copyOf(routes);
  }

  /** The pool of this name; the configuration's own names only. */
  public PoolConfig pool(String name) {
    PoolConfig p = pools.get(name);
    if (p == null) throw new IllegalArgumentException("no pool " + name);
    return p;
  }

  /** The policy file of a pool: its own, else {@code policy.file}; empty when policies are off. */
  public Optional<Path> policyOf(String pool) {
    return pool(pool).policy().or(policy::file);
  }

  /** Whether requests are checked against a policy (every pool then has one). */
  public boolean policyEnabled() {
    return policyOf(pools.keySet().iterator().next()).isPresent();
  }

  /**
   * The first listed backend: what tools that talk to one server use. With only pools of engines there is
   * none, and this is the discard port on loopback: every call is routed to an engine, and one that somehow
   * were not would fail UNAVAILABLE rather than reach a server.
   */
  public BackendConfig firstBackend() {
    return pools.values().stream()
        .flatMap(p -> p.backends().stream())
        .findFirst()
        .orElse(NO_BACKEND);
  }

  private static final BackendConfig NO_BACKEND =
      new BackendConfig("127.0.0.1", 9, Optional.empty(), BackendProfileConfig.defaults());

  /** Reads and validates a configuration file, or explains precisely why it cannot be used. */
  public static ProxyConfig load(Path file) {
    String text;
    try {
      text = Files.readString(file);
    } catch (NoSuchFileException e) {
      throw new ConfigException(
          file + ": no such file (pass --config with the path to sparkgate.yaml)");
    } catch (IOException e) {
      throw new ConfigException(file + ": cannot read: " + e.getMessage(), e);
    }
    YamlNode root = YamlNode.parse(file.toString(), new StringReader(text), ConfigException::new);
    if (root.isNull()) {
      throw root.error("the file is empty; see proxy/sparkgate.yaml for a complete example");
    }
    if (!root.isMapping()) {
      throw root.error("the top level must be a mapping of sections (listen, tls, pools, ...)");
    }
    return read(file, root);
  }

  static ProxyConfig read(Path file, YamlNode root) {
    root.allowOnly(
        "listen",
        "tls",
        "backend",
        "pools",
        "routes",
        "sessions",
        "health",
        "quotas",
        "auth",
        "audit",
        "policy",
        "admin",
        "metrics",
        "limits",
        "tracing");
    ListenConfig listen = ListenConfig.read(root.section("listen"));
    Optional<TlsConfig> tls;
    if (listen.plaintext()) {
      if (root.has("tls")) {
        throw root.errorAt(
            "tls", "listen.plaintext is true but a tls section is set: remove one of them");
      }
      tls = Optional.empty();
    } else {
      if (!root.has("tls")) {
        throw root.errorAt(
            "tls",
            "is required unless listen.plaintext is true "
                + "(certs/make-dev-certs.sh makes a dev certificate set)");
      }
      tls = Optional.of(TlsConfig.read(root.section("tls")));
    }
    Map<String, PoolConfig> pools;
    if (root.has("pools")) {
      if (root.has("backend")) {
        throw root.errorAt(
            "backend", "and pools are both set: move the backend into a pool (pools replaces it)");
      }
      pools = PoolConfig.readAll(root.section("pools"));
    } else if (root.has("backend")) {
      pools =
          Map.of(
              PoolConfig.DEFAULT, PoolConfig.single(BackendConfig.read(root.section("backend"))));
    } else {
      throw root.errorAt(
          "pools",
          "is required: pools.<name>.backends lists the Spark Connect servers (host:port);"
              + " or backend.address for a single server");
    }
    List<RouteConfig> routes;
    if (root.has("routes")) {
      routes = RouteConfig.readAll(root, pools.keySet());
      if (routes.isEmpty())
        throw root.errorAt("routes", "is empty: every principal would be refused");
    } else if (pools.size() == 1) {
      routes = List.of(new RouteConfig(MatchConfig.ANYONE, pools.keySet().iterator().next()));
    } else {
      throw root.errorAt(
          "routes", "is required with more than one pool: which principals go to which pool");
    }
    if (!root.has("auth")) {
      // Secure by default: a forgotten section must not silently mean "anyone, as any user".
      throw root.errorAt(
          "auth",
          "is required: configure jwt, static_tokens or client_cert (proxy/sparkgate.yaml shows"
              + " each), or say auth: {anonymous: true} to accept every caller as user 'anonymous'");
    }
    AuthConfig auth = AuthConfig.read(root);
    if (auth.clientCert().isPresent() && tls.flatMap(TlsConfig::clientCaFile).isEmpty()) {
      throw root.section("auth")
          .errorAt(
              "client_cert",
              "needs tls.client_ca_file: only a verified client certificate names anyone");
    }
    AuditConfig audit =
        root.has("audit") ? AuditConfig.read(root.section("audit")) : AuditConfig.disabled();
    PolicyConfig policy =
        root.has("policy") ? PolicyConfig.read(root.section("policy")) : PolicyConfig.disabled();
    if (!policy.enabled()) {
      List<String> with =
          pools.values().stream()
              .filter(p -> p.policy().isPresent())
              .map(PoolConfig::name)
              .toList();
      if (!with.isEmpty() && with.size() < pools.size()) {
        throw root.errorAt(
            "policy",
            "is not set, but pools "
                + with
                + " have a policy and others do not: a pool without one would check nothing;"
                + " set policy.file (the default) or give every pool its policy");
      }
    }
    if (root.has("admin") && root.has("metrics")) {
      throw root.errorAt(
          "metrics", "is the old name of admin: configure the admin listener in admin only");
    }
    String adminSection = root.has("metrics") ? "metrics" : "admin";
    AdminConfig admin =
        root.has(adminSection)
            ? AdminConfig.read(root.section(adminSection), adminSection)
            : AdminConfig.disabled();
    if (admin.enabled() && admin.port() != 0 && admin.port() == listen.port()) {
      throw root.section(adminSection)
          .errorAt(
              "port",
              "is listen.port too (" + listen.port() + "): give the admin listener its own port");
    }
    SessionsConfig sessions =
        root.has("sessions")
            ? SessionsConfig.read(root.section("sessions"))
            : SessionsConfig.memory();
    if (auth.revocations().stateFile().isPresent()
        && sessions.store() == SessionsConfig.Store.REDIS) {
      throw root.section("auth")
          .section("revocations")
          .errorAt(
              "state_file",
              "is for a proxy without Redis: with sessions.store redis, revocations are kept in"
                  + " Redis, shared by every replica; remove state_file");
    }
    return new ProxyConfig(
        file,
        listen,
        tls,
        pools,
        routes,
        sessions,
        root.has("health") ? HealthConfig.read(root.section("health")) : HealthConfig.defaults(),
        root.has("quotas") ? QuotasConfig.read(root.section("quotas")) : QuotasConfig.none(),
        auth,
        audit,
        policy,
        admin,
        root.has("limits") ? LimitsConfig.read(root.section("limits")) : LimitsConfig.defaults(),
        root.has("tracing")
            ? Optional.of(TracingConfig.read(root.section("tracing")))
            : Optional.empty());
  }
}
