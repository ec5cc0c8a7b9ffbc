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
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sparkgate as users meet it on a shared server: TLS with a private CA, one static bearer token per user (one
 * user, {@link #PRINCIPAL}, unless told otherwise), the shipped policies/shared-server.yaml, and the audit
 * log on, in front of one Spark server.
 */
final class CompatProxy implements AutoCloseable {

  static final Path POLICY = Path.of("policies", "shared-server.yaml");
  static final String PRINCIPAL = "compat-user";

  /** A caller: a principal in these groups (the policy's {@code groups} / {@code except_groups}). */
  record User(String principal, List<String> groups) {
    User {
      groups = List.copyOf(groups);
    }
  }

  private final Sparkgate proxy;
  private final Map<String, Target> targets;
  private final Path auditLog;

  private CompatProxy(Sparkgate proxy, Map<String, Target> targets, Path auditLog) {
    this.proxy = proxy;
    this.targets = targets;
    this.auditLog = auditLog;
  }

  /**
   * What a test may change in the users' proxy: its users (each with a token of its own; the first is
   * {@link #target()}'s), settings of the {@code policy} section beside its file (e.g. {@code
   * max_decompressed_plan_bytes}), and more top-level configuration (YAML lines such as {@code admin:
   * {...}} or {@code limits: {...}}).
   */
  record Options(List<User> users, Map<String, String> policySettings, List<String> extraConfig) {
    static final Options DEFAULTS =
        new Options(List.of(new User(PRINCIPAL, List.of())), Map.of(), List.of());

    Options {
      users = List.copyOf(users);
      policySettings = Map.copyOf(policySettings);
      extraConfig = List.copyOf(extraConfig);
      if (users.isEmpty()) {
        throw new IllegalArgumentException("a proxy needs at least one user");
      }
    }

    /** The defaults with this top-level configuration added. */
    static Options withConfig(List<String> extraConfig) {
      return new Options(DEFAULTS.users(), Map.of(), extraConfig);
    }
  }

  /**
   * Generates a CA and a server certificate in {@code dir}, and starts a proxy in front of the backend with
   * one user, {@link #PRINCIPAL}, in no group.
   */
  static CompatProxy start(Path dir, int backendPort, String serverVersion) throws IOException {
    return start(dir, backendPort, serverVersion, Options.DEFAULTS);
  }

  /** The same with these users, each given a token of its own ({@link #target(String)}). */
  static CompatProxy start(Path dir, int backendPort, String serverVersion, List<User> users)
      throws IOException {
    return start(dir, backendPort, serverVersion, new Options(users, Map.of(), List.of()));
  }

  /** The same with these users and policy settings. */
  static CompatProxy start(Path dir, int backendPort, String serverVersion, Options options)
      throws IOException {
    List<User> users = options.users();
    Files.createDirectories(dir);
    DevCertificates.Generated certs =
        DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    Map<String, String> tokens = new LinkedHashMap<>();
    List<String> lines =
        new ArrayList<>(
            List.of(
                "listen: {address: 127.0.0.1, port: 0}",
                "tls: {cert_file: certs/server.pem, key_file: certs/server.key}",
                "backend: {address: 'localhost:" + backendPort + "'}",
                "auth:",
                "  static_tokens:"));
    for (User user : users) {
      String token = newToken();
      if (tokens.put(user.principal(), token) != null) {
        throw new IllegalArgumentException("user " + user.principal() + " given twice");
      }
      lines.add("    - sha256: " + sha256(token));
      lines.add("      principal: " + user.principal());
      if (!user.groups().isEmpty()) {
        lines.add("      groups: [" + String.join(", ", user.groups()) + "]");
      }
    }
    StringBuilder policy = new StringBuilder("policy: {file: '" + POLICY.toAbsolutePath() + "'");
    options
        .policySettings()
        .forEach((k, v) -> policy.append(", ").append(k).append(": ").append(v));
    lines.add(policy.append('}').toString());
    lines.add("audit: {file: audit.jsonl}");
    lines.addAll(options.extraConfig());
    lines.add("");
    Path config = dir.resolve("sparkgate.yaml");
    Files.writeString(config, String.join("\n", lines));
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
    return new CompatProxy(proxy, Collections.unmodifiableMap(targets), dir.resolve("audit.jsonl"));
  }

  /** The first user's target ({@link #PRINCIPAL}'s for a proxy started with the defaults). */
  Target target() {
    return targets.values().iterator().next();
  }

  /** Where {@code principal} connects, with its own token. */
  Target target(String principal) {
    Target target = targets.get(principal);
    if (target == null) {
      throw new IllegalArgumentException(
          "no user " + principal + " on this proxy: " + targets.keySet());
    }
    return target;
  }

  /** The admin listener's port; only with an {@code admin} section in the extra configuration. */
  int metricsPort() {
    return proxy.metricsPort();
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
