package io.sparkgate.cli;

import io.sparkgate.config.BackendProfileConfig;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionView;
import io.sparkgate.policy.Explanation;
import io.sparkgate.policy.PolicyEngine;
import io.sparkgate.policy.ProfileSource;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Prints the facts Sparkgate's inspector sees in a SQL text or a request, one per line. */
@Command(
    name = "explain",
    mixinStandardHelpOptions = true,
    description =
        "Show what Sparkgate sees in a SQL statement or a Spark Connect request (one fact per line) and, with --policy, the decision and its rule.")
public final class ExplainCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  static final class Input {
    @Option(names = "--sql", description = "A SQL statement, as sent by spark.sql(...).")
    String sql;

    @Option(
        names = "--plan",
        description =
            "A request as protobuf JSON (ExecutePlanRequest unless --method says otherwise).")
    Path plan;
  }

  @ArgGroup(exclusive = true, multiplicity = "1")
  Input input;

  @Option(
      names = "--method",
      defaultValue = "ExecutePlan",
      description =
          "The RPC of --plan: ExecutePlan, AnalyzePlan, Config or AddArtifacts (default ${DEFAULT-VALUE}).")
  String method;

  @Option(
      names = "--catalog",
      defaultValue = SessionView.SESSION_CATALOG,
      description = "Current catalog (default ${DEFAULT-VALUE}).")
  String catalog;

  @Option(
      names = "--database",
      defaultValue = "default",
      description = "Current database (default ${DEFAULT-VALUE}).")
  String database;

  @Option(
      names = "--catalogs",
      split = ",",
      description = "Names of the backend's catalogs, comma separated.")
  String[] catalogs = new String[0];

  @Option(
      names = "--policy",
      description = "Also decide with this policy file and print the deciding rule.")
  Path policy;

  @Option(
      names = "--pool",
      description =
          "Decide as the proxy does for this pool of --config: with the pool's policy and its backends' profile (extensions, catalogs).")
  String pool;

  @Option(
      names = "--config",
      defaultValue = "proxy/sparkgate.yaml",
      description = "The proxy configuration --pool is read from (default ${DEFAULT-VALUE}).")
  Path config;

  @Option(
      names = "--principal",
      defaultValue = "tester",
      description = "Principal for --policy (default ${DEFAULT-VALUE}).")
  String principal;

  @Option(
      names = "--groups",
      split = ",",
      description = "Groups of the principal, comma separated.")
  String[] groups = new String[0];

  @Option(
      names = "--extensions",
      split = ",",
      description = "Backend spark.sql.extensions classes, comma separated.")
  String[] extensions = new String[0];

  @Option(
      names = "--catalog-impl",
      description = "A backend catalog and its class, name=class (repeatable).")
  java.util.Map<String, String> catalogImpls = new java.util.LinkedHashMap<>();

  @Override
  public Integer call() throws Exception {
    if (pool != null) {
      usePool(ProxyConfig.load(config));
    }
    SessionView session =
        new SessionView.Fixed(
            catalog,
            database,
            Set.copyOf(Arrays.asList(catalogs)),
            null,
            SessionView.LOCAL_FILE_SYSTEM,
            Set.copyOf(Arrays.asList(extensions)),
            Set.of(),
            Set.of(),
            null);
    Inspector inspector = new Inspector();
    Facts facts;
    if (input.sql != null) {
      facts = inspector.inspectSql(input.sql, session);
    } else {
      byte[] request;
      try {
        request =
            Explanation.requestFromJson(
                method, Files.readString(input.plan, StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      }
      facts = inspector.inspect(method, request, session);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (policy != null) {
      BackendProfile profile = new BackendProfile("", List.of(extensions), catalogImpls, catalog);
      PolicyEngine engine =
          new PolicyEngine(
              () -> PolicyCommand.compiler().compile(policy), ProfileSource.fixed(profile));
      Explanation explained =
          Explanation.of(
              engine,
              input.sql != null ? "ExecutePlan" : method,
              principal,
              List.of(groups),
              facts);
      explained.lines().forEach(out::println);
      out.flush();
      return 0;
    }
    for (Fact f : facts.all()) out.println(f);
    out.flush();
    return 0;
  }

  /** Takes the policy and the profile overrides of {@link #pool}, unless given explicitly. */
  private void usePool(ProxyConfig proxy) {
    if (!proxy.pools().containsKey(pool)) {
      throw new picocli.CommandLine.ParameterException(
          spec.commandLine(),
          "--pool " + pool + ": " + config + " has pools " + proxy.pools().keySet());
    }
    if (policy == null) {
      policy =
          proxy
              .policyOf(pool)
              .orElseThrow(
                  () ->
                      new picocli.CommandLine.ParameterException(
                          spec.commandLine(), "--pool " + pool + " has no policy in " + config));
    }
    BackendProfileConfig profile = proxy.pool(pool).profile();
    if (extensions.length == 0) {
      extensions = profile.extensions().orElse(List.of()).toArray(String[]::new);
    }
    if (catalogImpls.isEmpty()) {
      profile.catalogs().ifPresent(catalogImpls::putAll);
    }
    if (catalogs.length == 0) {
      catalogs = catalogImpls.keySet().toArray(String[]::new);
    }
  }
}
