package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One pool of interchangeable Spark Connect servers ({@code pools.<name>}): the same Spark, extensions and
 * catalogs on each, so one profile and one policy serve the whole pool; a session lives on one of them.
 * The servers are either listed ({@code backends}, where an entry may name them through DNS) or started by
 * Sparkgate on demand ({@code engines}).
 *
 * @param backends the listed servers; empty for a pool of engines
 * @param dns the {@code dns:} entries of {@code backends}: servers found through DNS, besides the listed
 * @param policy the pool's own policy file; empty: {@code policy.file}
 * @param engines present: the pool's servers are engines Sparkgate starts, and {@code backends} is empty
 */
public record PoolConfig(
    String name,
    List<BackendConfig> backends,
    Optional<Path> policy,
    Optional<EnginesConfig> engines,
    List<DnsBackendConfig> dns) {
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,62}");

  public PoolConfig {
    backends = List.copyOf(backends);
    dns = List.copyOf(dns);
    if ((backends.isEmpty() && dns.isEmpty()) == engines.isEmpty()) {
      throw new IllegalArgumentException("a pool has backends or engines, one of the two");
    }
  }

  public PoolConfig(
      String name,
      List<BackendConfig> backends,
      Optional<Path> policy,
      Optional<EnginesConfig> engines) {
    this(name, backends, policy, engines, List.of());
  }

  public PoolConfig(String name, List<BackendConfig> backends, Optional<Path> policy) {
    this(name, backends, policy, Optional.empty());
  }

  /** The pool a configuration with only {@code backend:} has. */
  public static PoolConfig single(BackendConfig backend) {
    return new PoolConfig(DEFAULT, List.of(backend), Optional.empty());
  }

  /** The name of the one pool of a configuration with {@code backend:} instead of {@code pools:}. */
  public static final String DEFAULT = "default";

  /** What the pool's backends are (version, extensions, catalogs): the same for each, checked when read. */
  public BackendProfileConfig profile() {
    return engines.isPresent()
        ? engines.get().profile(BackendProfileConfig.defaults())
        : backends.isEmpty() ? dns.get(0).backend().profile() : backends.get(0).profile();
  }

  /** The backend of this address, if it is one of the pool's. */
  public Optional<BackendConfig> backend(String address) {
    return backends.stream().filter(b -> b.address().equals(address)).findFirst();
  }

  static Map<String, PoolConfig> readAll(YamlNode pools) {
    if (pools.entries().isEmpty()) {
      throw pools.error("must name at least one pool, e.g. analytics: {backends: [spark-a:15002]}");
    }
    Map<String, PoolConfig> out = new LinkedHashMap<>();
    Set<String> addresses = new HashSet<>();
    Set<String> dnsNames = new HashSet<>();
    for (String name : pools.entries().keySet()) {
      YamlNode node = pools.section(name);
      if (!NAME.matcher(name).matches()) {
        throw node.error(
            "a pool name is lower-case letters, digits, '_', '.' and '-' (it is a metric label)");
      }
      node.allowOnly("backends", "policy", "engines");
      if (node.has("engines")) {
        if (node.has("backends")) {
          throw node.errorAt(
              "engines",
              "and backends are both set: a pool's servers are either listed or started by Sparkgate");
        }
        out.put(
            name,
            new PoolConfig(
                name,
                List.of(),
                node.existingFile("policy"),
                Optional.of(EnginesConfig.read(node.section("engines")))));
        continue;
      }
      List<YamlNode> entries = node.list("backends");
      if (entries.isEmpty()) {
        throw node.errorAt(
            "backends",
            "is required: the pool's Spark Connect servers, host:port (or engines: Sparkgate starts"
                + " them)");
      }
      List<BackendConfig> backends = new ArrayList<>();
      List<DnsBackendConfig> dns = new ArrayList<>();
      BackendProfileConfig first = null;
      for (YamlNode entry : entries) {
        if (entry.isMapping() && entry.entries().containsKey("dns")) {
          DnsBackendConfig d = DnsBackendConfig.read(entry);
          if (!dnsNames.add(d.source())) {
            throw entry.errorAt(
                "dns",
                d.source()
                    + " is listed twice: a Spark server holds its sessions for one pool only");
          }
          if (first != null && !d.backend().profile().equals(first)) {
            throw entry.error(
                "its profile differs from the pool's first backend: a pool's servers must be"
                    + " interchangeable (put different servers in different pools)");
          }
          if (first == null) first = d.backend().profile();
          dns.add(d);
          continue;
        }
        BackendConfig b = BackendConfig.readEntry(entry);
        if (!addresses.add(b.address())) {
          throw entry.error(
              b.address()
                  + " is listed twice: a Spark server holds its sessions for one pool only");
        }
        if (first != null && !b.profile().equals(first)) {
          throw entry.error(
              "its profile differs from the pool's first backend: a pool's servers must be"
                  + " interchangeable (put different servers in different pools)");
        }
        if (first == null) first = b.profile();
        backends.add(b);
      }
      out.put(
          name, new PoolConfig(name, backends, node.existingFile("policy"), Optional.empty(), dns));
    }
    return out;
  }
}
