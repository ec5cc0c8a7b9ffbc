package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code pools.<name>.engines}: the pool's Spark Connect servers are started by Sparkgate, one per user,
 * group or tenant ({@code share}), with {@code spark-submit} from {@code spark_home}, and stopped when idle.
 *
 * @param conf passed to each engine as {@code --conf}; never a {@code spark.connect.*} key (Sparkgate sets
 *     those: the port, the binding address and the token no one else knows)
 * @param bindAddress where engines listen: loopback unless the operator says otherwise, so only this host
 *     (and Sparkgate's token) reaches them
 * @param logDir one log file per engine; empty: a directory under the system's temporary directory
 * @param ports the range engines' ports are chosen from: by default below Linux's ephemeral ports, where
 *     Spark's own random ports (the driver's RPC and block manager) never land
 * @param maxHeldCalls first calls waiting for a starting engine at most, across the pool; beyond it a call is
 *     refused UNAVAILABLE at once
 * @param sparkVersion the distribution's Spark version, read from its jars; empty when they do not say
 */
public record EnginesConfig(
    Share share,
    Path sparkHome,
    String master,
    String deployMode,
    Map<String, String> conf,
    boolean proxyUser,
    int warm,
    int max,
    Duration idleTimeout,
    Duration startTimeout,
    String bindAddress,
    Optional<Path> logDir,
    PortRange ports,
    int maxHeldCalls,
    Optional<String> sparkVersion) {

  /** Whose engine a principal's sessions run on. */
  public enum Share {
    /** One engine per principal name. */
    USER,
    /** One engine per principal's first group (as the identity provider lists them). */
    GROUP,
    /** One engine per tenant. */
    TENANT
  }

  /** Engines' ports: {@code from} to {@code to}, both included. */
  public record PortRange(int from, int to) {
    public static final PortRange DEFAULT = new PortRange(20000, 29999);

    public int size() {
      return to - from + 1;
    }
  }

  private static final Pattern SPARK_CORE =
      Pattern.compile("spark-core_[0-9.]+-(\\d+\\.\\d+\\.\\d+)\\.jar");

  public EnginesConfig {
    conf = Map.copyOf(conf);
  }

  /** The spark-submit script of the distribution. */
  public Path sparkSubmit() {
    return sparkHome.resolve("bin").resolve("spark-submit");
  }

  static EnginesConfig read(YamlNode node) {
    node.allowOnly(
        "share",
        "spark_home",
        "master",
        "deploy_mode",
        "conf",
        "proxy_user",
        "warm",
        "max",
        "idle_timeout",
        "start_timeout",
        "bind_address",
        "log_dir",
        "ports",
        "max_held_calls");
    String shareText =
        node.requiredString("share", "user, group or tenant: whose engine a session runs on");
    Share share;
    try {
      share = Share.valueOf(shareText.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw node.errorAt("share", "must be user, group or tenant, got '" + shareText + "'");
    }
    Path home =
        node.resolve(
            node.requiredString("spark_home", "a Spark distribution (bin/spark-submit and jars/)"));
    if (!Files.isExecutable(home.resolve("bin").resolve("spark-submit"))) {
      throw node.errorAt(
          "spark_home",
          home
              + " has no executable bin/spark-submit: point it at a Spark 4 distribution (a pyspark"
              + " package's pyspark/ directory is one)");
    }
    String deployMode = node.string("deploy_mode", "client");
    if (!deployMode.equals("client")) {
      throw node.errorAt(
          "deploy_mode",
          "must be client (the engine's driver runs beside Sparkgate, which must reach it; its"
              + " executors still run on the cluster manager), got '"
              + deployMode
              + "'");
    }
    Map<String, String> conf = conf(node);
    int max = node.integer("max", 20, 1, 10_000);
    int warm = node.integer("warm", 0, 0, 1_000);
    if (warm > max) {
      throw node.errorAt("warm", "is " + warm + ", more than max " + max);
    }
    boolean proxyUser = node.bool("proxy_user", false);
    if (proxyUser && share != Share.USER) {
      throw node.errorAt(
          "proxy_user", "needs share: user (Spark impersonates one user, not a group or tenant)");
    }
    if (proxyUser && warm > 0) {
      throw node.errorAt(
          "warm",
          "must be 0 with proxy_user: a warm engine is started before anyone it would run as asks");
    }
    Duration idle =
        node.duration(
            "idle_timeout", Duration.ofMinutes(30), Duration.ofSeconds(1), Duration.ofDays(7));
    Duration start =
        node.duration(
            "start_timeout", Duration.ofMinutes(3), Duration.ofSeconds(5), Duration.ofHours(1));
    return new EnginesConfig(
        share,
        home,
        node.string("master", "local[*]"),
        deployMode,
        conf,
        proxyUser,
        warm,
        max,
        idle,
        start,
        node.string("bind_address", "127.0.0.1"),
        node.optionalString("log_dir").map(node::resolve),
        ports(node, max),
        node.integer("max_held_calls", 64, 1, 10_000),
        version(home));
  }

  private static PortRange ports(YamlNode node, int max) {
    Optional<String> text = node.optionalString("ports");
    if (text.isEmpty()) return PortRange.DEFAULT;
    Matcher m = Pattern.compile("(\\d{1,5})\\s*-\\s*(\\d{1,5})").matcher(text.get());
    if (!m.matches()) {
      throw node.errorAt("ports", "must be a range like 20000-29999, got '" + text.get() + "'");
    }
    PortRange range = new PortRange(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
    if (range.from() < 1024 || range.to() > 65535 || range.from() > range.to()) {
      throw node.errorAt(
          "ports", "must be a range within 1024-65535, low to high, got " + text.get());
    }
    if (range.size() < max) {
      throw node.errorAt(
          "ports", "holds " + range.size() + " ports, fewer than max " + max + " engines");
    }
    return range;
  }

  private static Map<String, String> conf(YamlNode node) {
    if (!node.has("conf")) return Map.of();
    YamlNode section = node.section("conf");
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, YamlNode> e : section.entries().entrySet()) {
      String key = e.getKey();
      if (key.startsWith("spark.connect.")) {
        throw section.errorAt(
            key,
            "is Sparkgate's to set on an engine (its port, binding address and token); remove it");
      }
      if (key.equals("spark.master") || key.equals("spark.submit.deployMode")) {
        throw section.errorAt(key, "is set by the engines' master and deploy_mode; remove it");
      }
      if (!e.getValue().isScalar()) {
        throw section.errorAt(key, "must be a single value, as spark-submit --conf takes it");
      }
      out.put(key, e.getValue().scalar());
    }
    return out;
  }

  /** The version in the distribution's {@code jars/spark-core_*.jar} name, if there is one. */
  private static Optional<String> version(Path home) {
    try (DirectoryStream<Path> jars =
        Files.newDirectoryStream(home.resolve("jars"), "spark-core_*.jar")) {
      for (Path jar : jars) {
        Matcher m = SPARK_CORE.matcher(jar.getFileName().toString());
        if (m.matches()) return Optional.of(m.group(1));
      }
    } catch (IOException e) {
      // No jars directory here: the engines' profile is read from a running engine instead.
    }
    return Optional.empty();
  }

  /**
   * The pool's profile as the engines' configuration states it: the distribution's version, and the
   * extensions and catalogs of {@code conf} (an engine has no others), so rules that depend on the profile
   * decide before any engine runs. Values in {@code profile} override these.
   */
  BackendProfileConfig profile(BackendProfileConfig overrides) {
    Map<String, String> catalogs = new LinkedHashMap<>();
    conf.forEach(
        (k, v) -> {
          if (k.startsWith("spark.sql.catalog.")) {
            String rest = k.substring("spark.sql.catalog.".length());
            if (!rest.isEmpty() && !rest.contains(".")) catalogs.put(rest, v);
          }
        });
    List<String> extensions =
        List.of(conf.getOrDefault("spark.sql.extensions", "").split(",")).stream()
            .map(String::strip)
            .filter(s -> !s.isEmpty())
            .toList();
    return new BackendProfileConfig(
        overrides.refreshInterval(),
        overrides.sparkVersion().or(() -> sparkVersion),
        overrides.extensions().or(() -> Optional.of(extensions)),
        overrides.catalogs().or(() -> Optional.of(Map.copyOf(catalogs))),
        overrides
            .defaultCatalog()
            .or(() -> Optional.ofNullable(conf.get("spark.sql.defaultCatalog"))),
        overrides.defaultFs().or(() -> Optional.ofNullable(conf.get("spark.hadoop.fs.defaultFS"))));
  }
}
