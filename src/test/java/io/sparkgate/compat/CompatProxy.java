package io.sparkgate.compat;

import io.sparkgate.Sparkgate;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.tls.DevCertificates;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;

/**
 * Sparkgate as users meet it on a shared server: TLS with a private CA, one static bearer token, the shipped
 * policies/shared-server.yaml, and the audit log on, in front of one Spark server.
 */
final class CompatProxy implements AutoCloseable {

  static final Path POLICY = Path.of("policies", "shared-server.yaml");
  static final String PRINCIPAL = "compat-user";

  private final Sparkgate proxy;
  private final Target target;
  private final Path auditLog;

  private CompatProxy(Sparkgate proxy, Target target, Path auditLog) {
    this.proxy = proxy;
    this.target = target;
    this.auditLog = auditLog;
  }

  /** Generates a CA and a server certificate in {@code dir}, and starts a proxy in front of the backend. */
  static CompatProxy start(Path dir, int backendPort, String serverVersion) throws IOException {
    return start(dir, backendPort, serverVersion, List.of());
  }

  /**
   * The same with more top-level configuration (YAML lines such as {@code admin: {...}} or {@code limits:
   * {...}}), for tests that need the metrics or a limit.
   */
  static CompatProxy start(
      Path dir, int backendPort, String serverVersion, List<String> extraConfig)
      throws IOException {
    Files.createDirectories(dir);
    DevCertificates.Generated certs =
        DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    String token = newToken();
    Path config = dir.resolve("sparkgate.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0}",
            "tls: {cert_file: certs/server.pem, key_file: certs/server.key}",
            "backend: {address: 'localhost:" + backendPort + "'}",
            "auth:",
            "  static_tokens:",
            "    - sha256: " + sha256(token),
            "      principal: " + PRINCIPAL,
            "policy: {file: '" + POLICY.toAbsolutePath() + "'}",
            "audit: {file: audit.jsonl}",
            String.join("\n", extraConfig),
            ""));
    Sparkgate proxy = Sparkgate.start(ProxyConfig.load(config));
    Target target =
        new Target(
            "localhost",
            proxy.port(),
            token,
            certs.caCert().toAbsolutePath(),
            certs.trustStore().toAbsolutePath(),
            DevCertificates.Options.defaults().password(),
            serverVersion);
    return new CompatProxy(proxy, target, dir.resolve("audit.jsonl"));
  }

  Target target() {
    return target;
  }

  Path auditLog() {
    return auditLog;
  }

  /** The admin listener's port; only with an {@code admin} section in the extra configuration. */
  int metricsPort() {
    return proxy.metricsPort();
  }

  @Override
  public void close() {
    proxy.close();
  }

  private static String newToken() {
    byte[] bytes = new byte[24];
    new SecureRandom().nextBytes(bytes);
    return "sg-compat-" + HexFormat.of().formatHex(bytes);
  }

  private static String sha256(String token) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK always has SHA-256", e);
    }
  }
}
