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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sparkgate as users meet it on a shared server: TLS with a private CA, one static bearer token, the shipped
 * policies/shared-server.yaml, and the audit log on, in front of one Spark server.
 */
final class CompatProxy implements AutoCloseable {

  static final Path POLICY = Path.of("policies", "shared-server.yaml");
  static final String PRINCIPAL = "compat-user";

  private final Sparkgate proxy;
  private final Map<String, Target> targets;
  private final Path auditLog;

  private CompatProxy(Sparkgate proxy, Map<String, Target> targets, Path auditLog) {
    this.proxy = proxy;
    this.targets = Map.copyOf(targets);
    this.auditLog = auditLog;
  }

  /**
   * What a test may add to the users' proxy: more users (each with a token of its own) and settings of the
   * {@code policy} section beside its file (e.g. {@code max_decompressed_plan_bytes}).
   */
  record Options(List<String> otherPrincipals, Map<String, String> policySettings) {
    static final Options DEFAULTS = new Options(List.of(), Map.of());

    Options {
      otherPrincipals = List.copyOf(otherPrincipals);
      policySettings = Map.copyOf(policySettings);
      if (otherPrincipals.contains(PRINCIPAL)) {
        throw new IllegalArgumentException(PRINCIPAL + " is always there; name other principals");
      }
    }
  }

  /** Generates a CA and a server certificate in {@code dir}, and starts a proxy in front of the backend. */
  static CompatProxy start(Path dir, int backendPort, String serverVersion) throws IOException {
    return start(dir, backendPort, serverVersion, Options.DEFAULTS);
  }

  /** {@link #start(Path, int, String)} with more users or policy settings. */
  static CompatProxy start(Path dir, int backendPort, String serverVersion, Options options)
      throws IOException {
    Files.createDirectories(dir);
    DevCertificates.Generated certs =
        DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    Map<String, String> tokens = new LinkedHashMap<>();
    tokens.put(PRINCIPAL, newToken());
    options.otherPrincipals().forEach(p -> tokens.put(p, newToken()));
    StringBuilder users = new StringBuilder();
    tokens.forEach(
        (principal, token) ->
            users
                .append("    - sha256: ")
                .append(sha256(token))
                .append("\n      principal: ")
                .append(principal)
                .append('\n'));
    StringBuilder policy = new StringBuilder("policy: {file: '" + POLICY.toAbsolutePath() + "'");
    options
        .policySettings()
        .forEach((k, v) -> policy.append(", ").append(k).append(": ").append(v));
    policy.append('}');
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
            users.toString() + policy,
            "audit: {file: audit.jsonl}",
            ""));
    Sparkgate proxy = Sparkgate.start(ProxyConfig.load(config));
    Map<String, Target> targets = new LinkedHashMap<>();
    tokens.forEach(
        (principal, token) ->
            targets.put(
                principal,
                new Target(
                    "localhost",
                    proxy.port(),
                    token,
                    certs.caCert().toAbsolutePath(),
                    certs.trustStore().toAbsolutePath(),
                    DevCertificates.Options.defaults().password(),
                    serverVersion)));
    return new CompatProxy(proxy, targets, dir.resolve("audit.jsonl"));
  }

  /** Where {@link #PRINCIPAL} connects. */
  Target target() {
    return target(PRINCIPAL);
  }

  /** Where {@code principal} (one of {@link Options#otherPrincipals}) connects, with its own token. */
  Target target(String principal) {
    Target t = targets.get(principal);
    if (t == null) {
      throw new IllegalArgumentException("no user " + principal + " on this proxy");
    }
    return t;
  }

  Path auditLog() {
    return auditLog;
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
