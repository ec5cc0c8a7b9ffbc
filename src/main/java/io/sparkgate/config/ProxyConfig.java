package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The whole, validated configuration of one proxy. Built once at start from one YAML file; immutable.
 *
 * @param tls absent only when {@code listen.plaintext} is true
 * @param metrics the Prometheus endpoint; {@link MetricsConfig#disabled()} without a metrics section
 */
public record ProxyConfig(
    Path source,
    ListenConfig listen,
    Optional<TlsConfig> tls,
    BackendConfig backend,
    AuthConfig auth,
    AuditConfig audit,
    PolicyConfig policy,
    MetricsConfig metrics) {

  /** A configuration without a policy section (no policy stage). */
  public ProxyConfig(
      Path source,
      ListenConfig listen,
      Optional<TlsConfig> tls,
      BackendConfig backend,
      AuthConfig auth,
      AuditConfig audit) {
    this(source, listen, tls, backend, auth, audit, PolicyConfig.disabled());
  }

  /** A configuration without a metrics section. */
  public ProxyConfig(
      Path source,
      ListenConfig listen,
      Optional<TlsConfig> tls,
      BackendConfig backend,
      AuthConfig auth,
      AuditConfig audit,
      PolicyConfig policy) {
    this(source, listen, tls, backend, auth, audit, policy, MetricsConfig.disabled());
  }

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
      throw root.error("the top level must be a mapping of sections (listen, tls, backend, ...)");
    }
    return read(file, root);
  }

  static ProxyConfig read(Path file, YamlNode root) {
    root.allowOnly("listen", "tls", "backend", "auth", "audit", "policy", "metrics");
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
    if (!root.has("backend")) {
      throw root.errorAt(
          "backend", "is required: backend.address is the host:port of the Spark Connect server");
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
    MetricsConfig metrics =
        root.has("metrics")
            ? MetricsConfig.read(root.section("metrics"))
            : MetricsConfig.disabled();
    if (metrics.enabled() && metrics.port() != 0 && metrics.port() == listen.port()) {
      throw root.section("metrics")
          .errorAt(
              "port",
              "is listen.port too (" + listen.port() + "): give the metrics endpoint its own port");
    }
    return new ProxyConfig(
        file,
        listen,
        tls,
        BackendConfig.read(root.section("backend")),
        auth,
        audit,
        policy,
        metrics);
  }
}
