package io.sparkgate.cli;

import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code --policy}, or {@code --pool} of {@code --config}: the policy file a command works with. A mixin, so
 * that {@code grants} and {@code policy explain} choose it alike: an explicit file wins, and the configuration
 * is then not read for the policy.
 */
final class PolicyOptions {
  @Option(names = "--policy", description = "The policy file (instead of --pool's policy).")
  Path policy;

  @Mixin PoolOptions pool;

  /**
   * {@code --policy}, else the policy of {@code --pool}; empty when neither is given.
   *
   * @throws Refused as {@link PoolOptions#named()}, or if the pool has no policy
   */
  Optional<Path> file() {
    return policy != null ? Optional.of(policy) : pool.named().map(PoolOptions.Pool::policy);
  }

  /** As {@link #file()}, but with neither given, the default pool's policy. */
  Path fileOrDefaultPool() {
    return policy != null ? policy : pool.namedOrDefault().policy();
  }
}
