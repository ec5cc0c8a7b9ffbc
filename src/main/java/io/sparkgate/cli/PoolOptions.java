package io.sparkgate.cli;

import io.sparkgate.config.BackendProfileConfig;
import io.sparkgate.config.ConfigException;
import io.sparkgate.config.PoolConfig;
import io.sparkgate.config.ProxyConfig;
import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * {@code --pool} and {@code --config}: a pool of the proxy configuration, whose policy (and backend profile) a
 * command takes as the proxy would. A mixin, so that {@code grants}, {@code policy test} and {@code policy
 * explain} name a pool alike and refuse the same mistakes with the same line.
 */
final class PoolOptions {
  @Option(
      names = "--pool",
      description = "Use this pool of --config: its policy, as the proxy does.")
  String name;

  @Option(
      names = "--config",
      defaultValue = "proxy/sparkgate.yaml",
      description = "The proxy configuration --pool is read from (default ${DEFAULT-VALUE}).")
  Path config;

  /** Read once per run, so that a command that asks twice sees one file. */
  private ProxyConfig proxy;

  /**
   * The pool {@code --pool} names; empty without it.
   *
   * @throws Refused if the configuration cannot be read or has no such pool
   */
  Optional<Pool> named() {
    return name == null ? Optional.empty() : Optional.of(read(name, "--pool " + name));
  }

  /** The pool {@code --pool} names, else the configuration's default pool. */
  Pool namedOrDefault() {
    return named()
        .orElseGet(() -> read(PoolConfig.DEFAULT, "pool " + PoolConfig.DEFAULT + " (no --pool)"));
  }

  private Pool read(String pool, String label) {
    if (proxy == null) {
      try {
        proxy = ProxyConfig.load(config);
      } catch (ConfigException e) {
        throw new Refused(e.getMessage());
      }
    }
    if (!proxy.pools().containsKey(pool)) {
      throw new Refused(label + ": " + config + " has pools " + proxy.pools().keySet());
    }
    return new Pool(pool, label, proxy, config);
  }

  /** A pool of a configuration; {@code label} is how messages name it (as the command line chose it). */
  record Pool(String name, String label, ProxyConfig proxy, Path config) {
    /** @throws Refused if policies are off for the pool */
    Path policy() {
      return proxy
          .policyOf(name)
          .orElseThrow(() -> new Refused(label + " has no policy in " + config));
    }

    BackendProfileConfig profile() {
      return proxy.pool(name).profile();
    }
  }
}
