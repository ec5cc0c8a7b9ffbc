package io.sparkgate.policy;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.ParserSettings;
import io.sparkgate.inspect.SessionView;
import io.sparkgate.yaml.YamlNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Runs the test files that sit beside policy files ({@code <name>_test.yaml} tests {@code <name>.yaml}):
 * each case describes a request and who sends it, and the decision (and rule) expected. A case's request is
 * built as a client would build it and goes through the real inspector, enrichment and evaluation.
 */
public final class PolicyTests {
  private final Inspector inspector = new Inspector();
  private final PolicyCompiler compiler;

  public PolicyTests(PolicyCompiler compiler) {
    this.compiler = compiler;
  }

  /** Totals of a run. */
  public record Summary(int passed, int failed) {
    public boolean ok() {
      return failed == 0;
    }
  }

  /** Runs every {@code *_test.yaml} in a directory, printing one line per case. */
  public Summary runDirectory(Path dir, PrintWriter out) {
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.filter(p -> p.getFileName().toString().endsWith("_test.yaml")).sorted().toList();
    } catch (IOException e) {
      throw new PolicyException(dir + ": cannot list: " + e.getMessage(), e);
    }
    int passed = 0;
    int failed = 0;
    for (Path f : files) {
      Summary s = runFile(f, out);
      passed += s.passed();
      failed += s.failed();
    }
    out.printf("%d passed, %d failed (%d test files)%n", passed, failed, files.size());
    return new Summary(passed, failed);
  }

  public Summary runFile(Path testFile, PrintWriter out) {
    String name = testFile.getFileName().toString();
    YamlNode root;
    try {
      root =
          PolicyCompiler.parse(
              testFile.toString(),
              new StringReader(Files.readString(testFile, StandardCharsets.UTF_8)));
    } catch (IOException e) {
      throw new PolicyException(testFile + ": cannot read: " + e.getMessage(), e);
    }
    Map<String, YamlNode> top = root.allowOnly("policy", "backend", "cases").entries();
    Path policyFile =
        testFile.resolveSibling(
            top.containsKey("policy")
                ? top.get("policy").text()
                : name.substring(0, name.length() - "_test.yaml".length()) + ".yaml");
    Policy policy = compiler.compile(policyFile);
    BackendProfile fileProfile =
        top.containsKey("backend") ? profile(top.get("backend")) : BackendProfile.UNKNOWN;
    if (!top.containsKey("cases")) throw root.error("'cases' is required");
    int passed = 0;
    int failed = 0;
    int i = 0;
    for (YamlNode c : top.get("cases").items()) {
      i++;
      String label = testFile.getFileName() + ":" + c.line();
      String failure;
      String caseName = "case #" + i;
      try {
        Map<String, YamlNode> m = c.in(caseName).entries();
        caseName = m.containsKey("name") ? m.get("name").text() : caseName;
        YamlNode where = c.in("case '" + caseName + "'");
        m =
            where
                .allowOnly(
                    "name",
                    "rpc",
                    "principal",
                    "groups",
                    "tenant",
                    "sql",
                    "config_set",
                    "config_get",
                    "artifact",
                    "plan",
                    "analyze",
                    "facts",
                    "catalog",
                    "database",
                    "session_functions",
                    "cached_tables",
                    "cached_plans",
                    "temp_views",
                    "backend",
                    "expect",
                    "rule")
                .entries();
        failure = runCase(m, where, policy, fileProfile);
      } catch (PolicyException e) {
        failure = "invalid case: " + e.getMessage();
      }
      if (failure == null) {
        passed++;
        out.printf("PASS %s %s%n", label, caseName);
      } else {
        failed++;
        out.printf("FAIL %s %s: %s%n", label, caseName, failure);
      }
    }
    out.flush();
    return new Summary(passed, failed);
  }

  /**
   * {@code temp_views: {v: [spark_catalog.shared.calendar, ...]}}: the session's temporary views and the
   * tables each read when it was created (catalog.namespace.table, split at the first and last dot).
   */
  private static Map<String, String> tempViews(YamlNode node) {
    if (node == null) return Map.of();
    Map<String, String> views = new java.util.HashMap<>();
    node.entries()
        .forEach(
            (view, tables) -> {
              List<String> lines = new java.util.ArrayList<>();
              for (String t : tables.strings()) {
                int first = t.indexOf('.');
                int last = t.lastIndexOf('.');
                if (first < 0 || first == last) {
                  throw tables.error("'" + t + "' is not catalog.namespace.table");
                }
                lines.add(
                    String.join(
                        "\t",
                        "table",
                        t.substring(0, first),
                        t.substring(first + 1, last),
                        t.substring(last + 1)));
              }
              views.put(view.toLowerCase(java.util.Locale.ROOT), String.join("\n", lines));
            });
    return views;
  }

  /** Null when the case passes, else what went wrong. */
  private String runCase(
      Map<String, YamlNode> m, YamlNode where, Policy policy, BackendProfile fileProfile) {
    if (!m.containsKey("expect"))
      throw where.error("'expect' is required (allow, deny or rewrite)");
    String expect = m.get("expect").text();
    String principal = m.containsKey("principal") ? m.get("principal").text() : "tester";
    List<String> groups = m.containsKey("groups") ? m.get("groups").strings() : List.of();
    String tenant = m.containsKey("tenant") ? m.get("tenant").text() : "";
    BackendProfile profile = fileProfile;
    if (m.containsKey("backend")) {
      YamlNode b = m.get("backend");
      profile = b.isScalar() && b.scalar().equals("unknown") ? null : profile(b);
    }
    SessionView.Fixed session =
        (SessionView.Fixed) (profile == null ? BackendProfile.UNKNOWN : profile).freshSession();
    if (m.containsKey("catalog")
        || m.containsKey("database")
        || m.containsKey("session_functions")
        || m.containsKey("cached_tables")
        || m.containsKey("cached_plans")
        || m.containsKey("temp_views")) {
      // The session as if it had run USE / SET CATALOG, created these temporary SQL functions, and
      // cached these tables (qualified names) and persisted these plans (relations in protobuf
      // JSON) before, no other session sharing them.
      Set<String> cached = new java.util.HashSet<>(lowerCase(m, "cached_tables"));
      if (m.containsKey("cached_plans"))
        for (YamlNode plan : m.get("cached_plans").items())
          cached.add(Inspector.cachedPlanKey(TestRequest.relation(plan)));
      session =
          session.withState(
              m.containsKey("catalog") ? m.get("catalog").text() : session.currentCatalog(),
              m.containsKey("database") ? m.get("database").text() : "default",
              null,
              lowerCase(m, "session_functions"),
              cached,
              tempViews(m.get("temp_views")));
    }
    String rpc;
    byte[] request;
    int inputs = 0;
    if (m.containsKey("sql")) {
      inputs++;
      rpc = "ExecutePlan";
      request = TestRequest.sql(m.get("sql").text(), principal);
    } else if (m.containsKey("config_set")) {
      inputs++;
      rpc = "Config";
      Map<String, String> pairs = new LinkedHashMap<>();
      m.get("config_set").entries().forEach((k, v) -> pairs.put(k, v.scalar()));
      request = TestRequest.configSet(pairs, principal);
    } else if (m.containsKey("config_get")) {
      inputs++;
      rpc = "Config";
      request = TestRequest.configGet(m.get("config_get").strings(), principal);
    } else if (m.containsKey("plan")) {
      inputs++;
      rpc = "ExecutePlan";
      request = TestRequest.plan(m.get("plan"), principal);
    } else if (m.containsKey("analyze")) {
      inputs++;
      rpc = "AnalyzePlan";
      request = TestRequest.analyze(m.get("analyze"), principal);
    } else if (m.containsKey("artifact")) {
      inputs++;
      rpc = "AddArtifacts";
      request = TestRequest.artifact(m.get("artifact").text(), principal);
    } else {
      rpc = "ExecutePlan";
      request = null;
    }
    if (m.containsKey("rpc")) rpc = m.get("rpc").text();
    if (request == null) request = TestRequest.bare(rpc, principal);
    Facts facts;
    if (m.containsKey("facts")) {
      if (inputs > 0)
        throw where.error(
            "give either facts or a request (sql, config_set, config_get, artifact, plan, analyze)");
      facts = inspector.inspect(rpc, request, session).plus(facts(m.get("facts")));
    } else {
      if (inputs > 1)
        throw where.error("give one of sql, config_set, config_get, artifact, plan, analyze");
      facts = inspector.inspect(rpc, request, session, inspector.newArtifactTracker());
    }
    ProfileSource source =
        profile == null
            ? new ProfileSource(
                () -> {
                  throw new IllegalStateException("unknown");
                },
                ProfileSource.Overrides.NONE)
            : ProfileSource.fixed(profile);
    PolicyEngine engine = new PolicyEngine(() -> policy, source);
    Decision d = engine.decide(rpc, principal, groups, tenant, engine.enrich(facts));
    String got = d.effect().label();
    if (!got.equals(expect)) {
      return "expected "
          + expect
          + ", got "
          + got
          + " by rule '"
          + d.rule()
          + "'"
          + (d.refused() ? " (" + d.message() + ")" : "")
          + "; facts:\n    "
          + facts.toString().strip().replace("\n", "\n    ");
    }
    if (m.containsKey("rule") && !m.get("rule").text().equals(d.rule())) {
      return "expected rule '" + m.get("rule").scalar() + "', got '" + d.rule() + "'";
    }
    return null;
  }

  private static Set<String> lowerCase(Map<String, YamlNode> m, String key) {
    if (!m.containsKey(key)) return Set.of();
    return Set.copyOf(
        m.get(key).strings().stream().map(v -> v.toLowerCase(java.util.Locale.ROOT)).toList());
  }

  private static Facts facts(YamlNode node) {
    List<Fact> out = new ArrayList<>();
    for (YamlNode f : node.items()) {
      Map<String, YamlNode> m = f.allowOnly("kind", "subkind", "attrs").entries();
      Fact.Kind kind;
      try {
        kind = Fact.Kind.valueOf(m.get("kind") == null ? "" : m.get("kind").text());
      } catch (IllegalArgumentException e) {
        throw f.errorAt("kind", "must be one of " + List.of(Fact.Kind.values()));
      }
      Map<String, String> attrs = new LinkedHashMap<>();
      if (m.containsKey("attrs"))
        m.get("attrs").entries().forEach((k, v) -> attrs.put(k, v.scalar()));
      out.add(new Fact(kind, m.containsKey("subkind") ? m.get("subkind").scalar() : "", attrs));
    }
    return Facts.of(out);
  }

  static BackendProfile profile(YamlNode node) {
    Map<String, YamlNode> m =
        node.allowOnly(
                "spark_version",
                "extensions",
                "catalogs",
                "default_catalog",
                "default_fs",
                "settings")
            .entries();
    Map<String, String> catalogs = new LinkedHashMap<>();
    if (m.containsKey("catalogs"))
      m.get("catalogs").entries().forEach((k, v) -> catalogs.put(k, v.text()));
    // The backend's parser settings (spark.sql.variable.substitute, ...), as the profiler reads
    // them.
    Map<String, String> settings = new LinkedHashMap<>();
    if (m.containsKey("settings"))
      m.get("settings").entries().forEach((k, v) -> settings.put(k, v.text()));
    String version = m.containsKey("spark_version") ? m.get("spark_version").scalar() : "";
    return new BackendProfile(
        version,
        m.containsKey("extensions") ? m.get("extensions").strings() : List.of(),
        catalogs,
        m.containsKey("default_catalog") ? m.get("default_catalog").text() : null,
        m.containsKey("default_fs") ? m.get("default_fs").text() : null,
        ParserSettings.of(version, settings));
  }
}
