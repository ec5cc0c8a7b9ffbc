package io.sparkgate.cli;

import io.sparkgate.config.BackendProfileConfig;
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
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Prints the facts Sparkgate's inspector sees in a SQL text or a request, one per line. */
@Command(
    name = "explain",
    mixinStandardHelpOptions = true,
    description =
        "Show what Sparkgate sees in a SQL statement or a Spark Connect request (one fact per line) and, with --policy or --pool, the decision and its rule. --pool also takes its backends' profile (extensions, catalogs) where no option gives one.")
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

  @Mixin PolicyOptions source;

  @Option(
      names = "--principal",
      defaultValue = "tester",
      description = "Principal for the decision (default ${DEFAULT-VALUE}).")
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
    Path policy;
    try {
      policy = source.file().orElse(null);
      source.pool.named().ifPresent(this::useProfile);
    } catch (Refused e) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
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

  /** Takes the profile of the pool's backends where the command line gives none. */
  private void useProfile(PoolOptions.Pool pool) {
    BackendProfileConfig profile = pool.profile();
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
