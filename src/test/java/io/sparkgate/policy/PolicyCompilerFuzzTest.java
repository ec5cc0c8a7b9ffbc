package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertFalse;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionView;
import io.sparkgate.lakehouse.IcebergTimeTravelPolicyRewriter;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Any text as a policy file (the corpus: policies using every part of the language, and an include of the
 * shipped one, which the fuzzer mutates). It compiles, or is rejected with a PolicyException that says why;
 * never another exception. And a policy that compiles can be evaluated on any facts without throwing.
 */
final class PolicyCompilerFuzzTest {
  private static final SecretPatterns SECRETS =
      new SecretPatterns(AuthConfig.disabled().secretPatterns());

  /** Named as if it sat beside the shipped policies, so that {@code include: shared-server.yaml} finds one. */
  private static final String FILE = "policies/fuzzed.yaml";

  private static final PolicyCompiler COMPILER = new PolicyCompiler(Effect.DENY, rewriters());
  private static final List<Facts> FACTS = facts();
  private static final BackendProfile[] PROFILES = {
    null,
    new BackendProfile("4.0.0", List.of(), Map.of(), null),
    new BackendProfile(
        "3.5.7",
        List.of(
            "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"),
        Map.of("cat", "org.apache.iceberg.spark.SparkCatalog"),
        "cat"),
  };

  @FuzzTest
  void compile_anyText_compilesOrSaysWhy(byte[] input) {
    Policy policy;
    try {
      policy = COMPILER.compile(FILE, new StringReader(new String(input, StandardCharsets.UTF_8)));
    } catch (PolicyException e) {
      assertFalse(
          e.getMessage() == null || e.getMessage().isBlank(), "a rejection without a message");
      return;
    }
    for (Facts facts : FACTS) {
      for (BackendProfile profile : PROFILES) {
        for (List<String> groups : List.of(List.<String>of(), List.of("sparkgate-admins"))) {
          Facts enriched = Enrichment.enrich(facts, profile, SECRETS);
          policy.evaluate(new EvalInput("ExecutePlan", "alice", groups, "t1", enriched, profile));
        }
      }
    }
  }

  private static Set<String> rewriters() {
    Set<String> names = new HashSet<>(IcebergTimeTravelPolicyRewriter.all().keySet());
    names.add("test_rewriter");
    return names;
  }

  /** Facts of requests a policy decides on: refused and allowed SQL, config, no facts at all, unclassified. */
  private static List<Facts> facts() {
    Inspector inspector = new Inspector();
    SessionView session = SessionView.of("spark_catalog", "default", Set.of("cat"));
    return List.of(
        Facts.empty(),
        inspector.inspectSql(
            "SELECT a, reflect('x', 'y') FROM cat.db.t VERSION AS OF 3 JOIN parquet.`/etc/x`",
            session),
        inspector.inspectSql("SET spark.sql.catalog.x=org.example.Evil", session),
        inspector.inspectSql("ADD JAR /tmp/x.jar", session),
        Facts.of(
            List.of(
                new Fact(Fact.Kind.UNCLASSIFIED, "unknown_case", Map.of("where", "plan.root")),
                new Fact(Fact.Kind.ARTIFACT, "begin", Map.of("name", "jars/x.jar")))));
  }
}
