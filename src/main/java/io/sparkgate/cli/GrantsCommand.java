package io.sparkgate.cli;

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

  /** Where who and what read the grants: the shared options' help cannot say, explain has no default. */
  private static final String FROM =
      "%nThe grants are --policy's, else those of --pool's policy, else the default pool's.";

  /** The grants of the policy the options choose; with none chosen, the default pool's. */
  private static DataAccess grants(PolicyOptions source) {
    Path file = source.fileOrDefaultPool();
    DataAccess grants;
    try {
      grants = PolicyCommand.compiler().compile(file).dataAccess();
    } catch (PolicyException e) {
      throw new Refused(e.getMessage());
    }
    if (!grants.present()) {
      throw new Refused(file + " has no data_access section: no grants to review");
    }
    return grants;
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
          "Every grant that covers a table or path: to whom, which privileges, by which pattern.",
      footer = FROM)
  static final class Who implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin PolicyOptions source;

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
            DataAccess grants = grants(source);
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
          "Every grant a principal holds: its tables and paths, and the privileges on them.",
      footer = FROM)
  static final class What implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin PolicyOptions source;

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
            DataAccess grants = grants(source);
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
