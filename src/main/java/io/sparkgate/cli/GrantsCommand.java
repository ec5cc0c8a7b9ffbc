package io.sparkgate.cli;

import io.sparkgate.config.ConfigException;
import io.sparkgate.config.PoolConfig;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.grants.Coverage;
import io.sparkgate.grants.DataAccess;
import io.sparkgate.grants.Holding;
import io.sparkgate.policy.PolicyException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code sparkgate grants who|what}: access review over a policy's {@code data_access} grants. */
@Command(
    name = "grants",
    mixinStandardHelpOptions = true,
    description =
        "Review a policy's data access grants: who may reach a table, what a principal holds.",
    subcommands = {GrantsCommand.Who.class, GrantsCommand.What.class})
final class GrantsCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new picocli.CommandLine.ParameterException(
        spec.commandLine(), "a subcommand is required: who or what");
  }

  /** Unusable input: one line saying why, exit 2, never a stack trace. */
  static final class Refused extends RuntimeException {
    Refused(String message) {
      super(message, null, false, false);
    }
  }

  /** Where the grants come from: a policy file, or the policy a pool of the proxy configuration uses. */
  static final class Source {
    @Option(names = "--policy", description = "The policy file (default: --pool's policy).")
    Path policy;

    @Option(
        names = "--pool",
        description = "Review the policy of this pool of --config (default: the default pool).")
    String pool;

    @Option(
        names = "--config",
        defaultValue = "proxy/sparkgate.yaml",
        description = "The proxy configuration --pool is read from (default ${DEFAULT-VALUE}).")
    Path config;

    DataAccess load() {
      Path file = policy;
      try {
        if (file == null) {
          String name = pool == null ? PoolConfig.DEFAULT : pool;
          ProxyConfig proxy = ProxyConfig.load(config);
          if (pool != null && !proxy.pools().containsKey(pool)) {
            throw new Refused(
                "--pool " + pool + ": " + config + " has pools " + proxy.pools().keySet());
          }
          file =
              proxy
                  .policyOf(name)
                  .orElseThrow(() -> new Refused("pool " + name + " has no policy in " + config));
        }
        DataAccess grants = PolicyCommand.compiler().compile(file).dataAccess();
        if (!grants.present()) {
          throw new Refused(file + " has no data_access section: no grants to review");
        }
        return grants;
      } catch (ConfigException | PolicyException e) {
        throw new Refused(e.getMessage());
      }
    }
  }

  private static int run(CommandSpec spec, Callable<Integer> body) throws Exception {
    try {
      return body.call();
    } catch (Refused | IllegalArgumentException e) {
      PrintWriter err = spec.commandLine().getErr();
      err.println("sparkgate grants: " + e.getMessage());
      err.flush();
      return 2;
    }
  }

  /** What the policy's default does to data no grant covers. */
  private static String uncovered(DataAccess grants) {
    String mode = grants.shadow() ? " (mode: shadow: refusals are only recorded)" : "";
    return grants.denyByDefault()
        ? "default deny: no one may reach it" + mode
        : "default allow: everyone may reach it";
  }

  @Command(
      name = "who",
      mixinStandardHelpOptions = true,
      description =
          "Every grant that covers a table or path: to whom, which privileges, by which pattern.")
  static final class Who implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin Source source;

    @Option(names = "--table", description = "catalog.namespace.name, e.g. iceberg.finance.payroll")
    String table;

    @Option(names = "--path", description = "A path with its scheme, e.g. s3a://bucket/dir/file")
    String path;

    @Override
    public Integer call() throws Exception {
      return run(
          spec,
          () -> {
            if (table == null && path == null) throw new Refused("give --table, --path or both");
            DataAccess grants = source.load();
            PrintWriter out = spec.commandLine().getOut();
            if (table != null) print(out, table, grants.who(table), grants);
            if (path != null) print(out, path, grants.whoPath(path), grants);
            out.flush();
            return 0;
          });
    }

    private static void print(PrintWriter out, String what, List<Coverage> found, DataAccess g) {
      if (found.isEmpty()) {
        out.println(what + ": no grant covers it; " + uncovered(g));
        return;
      }
      out.println(what + ":");
      for (Coverage c : found) {
        String only = c.principal().map(p -> ", for principal " + p + " only").orElse("");
        out.printf(
            "  %s: %s to %s%s (by %s)%n",
            c.grant(), String.join(", ", c.privileges()), c.to(), only, c.pattern());
      }
    }
  }

  @Command(
      name = "what",
      mixinStandardHelpOptions = true,
      description =
          "Every grant a principal holds: its tables and paths, and the privileges on them.")
  static final class What implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin Source source;

    @Option(names = "--principal", required = true, description = "The principal's name.")
    String principal;

    @Option(
        names = "--groups",
        split = ",",
        description = "The principal's groups, comma separated.")
    List<String> groups = List.of();

    @Option(names = "--tenant", description = "The principal's tenant.")
    String tenant;

    @Override
    public Integer call() throws Exception {
      return run(
          spec,
          () -> {
            DataAccess grants = source.load();
            List<Holding> held = grants.what(principal, groups, Optional.ofNullable(tenant));
            PrintWriter out = spec.commandLine().getOut();
            String who =
                principal
                    + (groups.isEmpty() ? "" : " (groups " + String.join(", ", groups) + ")")
                    + (tenant == null ? "" : " (tenant " + tenant + ")");
            if (held.isEmpty()) {
              out.println(
                  who
                      + " holds no grant; "
                      + (grants.denyByDefault()
                          ? "default deny: no table or path"
                          : "default allow: only what no grant covers"));
            } else {
              out.println(who + " holds:");
              for (Holding h : held) {
                List<String> on =
                    java.util.stream.Stream.concat(h.tables().stream(), h.paths().stream())
                        .toList();
                out.printf(
                    "  %s: %s on %s%n",
                    h.grant(), String.join(", ", h.privileges()), String.join(", ", on));
              }
            }
            out.flush();
            return 0;
          });
    }
  }
}
