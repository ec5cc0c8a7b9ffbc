package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import io.sparkgate.cli.CliPolicyCompiler;
import io.sparkgate.policy.Decision;
import io.sparkgate.policy.Policy;
import io.sparkgate.policy.PolicyEngine;
import io.sparkgate.policy.ProfileSource;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Table references as an attacker would write them (case, backticks, comments and spaces between parts,
 * IDENTIFIER('...'), catalogs, one to four parts, any characters inside quotes), in statements that read,
 * write, describe, cache and drop, with a current namespace of the caller's or another team's. Whatever the
 * grants of policies/team-data.yaml let bob (group marketing) through, Spark 4.0's own parser ({@link
 * SparkOracle}) must find no table outside bob's namespaces in it, resolved by Spark's rules here, apart from
 * Sparkgate's: a name Sparkgate reads as one table and Spark as another is a way around the grants.
 */
final class GrantsDifferentialFuzzTest {
  private static final BackendProfile PROFILE =
      new BackendProfile(
          "4.0.0", List.of(), Map.of("iceberg", "org.apache.iceberg.spark.SparkCatalog"), null);
  private static final Policy POLICY =
      CliPolicyCompiler.get().compile(Path.of("policies/team-data.yaml"));
  private static final PolicyEngine ENGINE =
      new PolicyEngine(() -> POLICY, ProfileSource.fixed(PROFILE));
  private static final Inspector INSPECTOR = new Inspector();

  private static final String[] STATEMENTS = {
    "SELECT * FROM %s",
    "SELECT * FROM marketing.leads JOIN %s USING (id)",
    "SELECT * FROM marketing.leads WHERE id IN (SELECT id FROM %s)",
    "INSERT INTO %s SELECT * FROM marketing.leads",
    "INSERT OVERWRITE TABLE %s SELECT 1",
    "DESCRIBE TABLE %s",
    "SHOW CREATE TABLE %s",
    "CACHE TABLE %s",
    "DROP TABLE %s",
    "TABLE %s",
    "MERGE INTO marketing.leads t USING %s s ON t.id = s.id WHEN MATCHED THEN DELETE",
    "CREATE TABLE marketing.copy AS SELECT * FROM %s",
    "DELETE FROM %s WHERE id = 1",
  };

  private static final String[] NAMES = {
    "finance",
    "FINANCE",
    "Finance",
    "payroll",
    "marketing",
    "leads",
    "shared",
    "scratch_bob",
    "scratch_alice",
    "spark_catalog",
    "SPARK_CATALOG",
    "iceberg",
    "global_temp",
    "default",
    "snapshots",
  };

  private static final String[] SEPARATORS = {".", " . ", "/* x */.", ".\n", ". -- c\n"};

  private static final String[] CURRENT = {"default", "marketing", "finance", "scratch_bob"};

  @FuzzTest
  void whatTheGrantsAllow_sparkReadsNothingOutsideThem(FuzzedDataProvider data) {
    String current = data.pickValue(CURRENT);
    String reference = reference(data);
    String sql = String.format(data.pickValue(STATEMENTS), reference);
    SessionView session =
        ((SessionView.Fixed) PROFILE.freshSession())
            .withState("spark_catalog", current, null, Set.of(), Set.of());
    Facts facts = INSPECTOR.inspectSql(sql, session);
    Decision d =
        ENGINE.decide("ExecutePlan", "bob", List.of("marketing"), "", ENGINE.enrich(facts));
    if (d.refused()) return;
    JsonNode spark =
        SparkOracle.get()
            .ask(
                new SparkOracle.Request(
                    SparkOracle.Mode.PLAN, SqlParserFlags.SPARK_4_0_DEFAULTS, sql));
    if (!spark.path("ok").asBoolean()) return; // Spark cannot parse it: nothing is read
    boolean mayHaveCtes = sql.toLowerCase(Locale.ROOT).contains("with");
    for (String key : List.of("relations", "writes")) {
      for (JsonNode name : spark.path(key)) {
        List<String> parts = new ArrayList<>();
        name.forEach(p -> parts.add(p.asText()));
        if (parts.isEmpty() || parts.size() == 1 && mayHaveCtes) continue;
        if (!bobs(parts, current)) {
          fail(
              "Sparkgate allowed bob "
                  + sql
                  + " (current namespace "
                  + current
                  + "), where Spark reads "
                  + parts
                  + "; Sparkgate's facts: "
                  + facts);
        }
      }
    }
  }

  /** One to four parts, each a name, a fuzzer string, quoted or not, in any case, joined oddly. */
  private static String reference(FuzzedDataProvider data) {
    int n = data.consumeInt(1, 4);
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) {
      if (i > 0) b.append(data.pickValue(SEPARATORS));
      String part =
          data.consumeBoolean()
              ? data.pickValue(NAMES)
              : data.consumeString(12).replace("\u0000", "");
      b.append(data.consumeBoolean() ? "`" + part.replace("`", "``") + "`" : part);
    }
    String ref = b.toString();
    return data.consumeBoolean() ? "IDENTIFIER('" + ref.replace("'", "\\'") + "')" : ref;
  }

  /** Whether bob's grants cover the table Spark names, resolved as Spark's CatalogAndIdentifier does. */
  private static boolean bobs(List<String> parts, String current) {
    String catalog = "spark_catalog";
    List<String> rest = parts;
    if (parts.size() > 1 && parts.get(0).equalsIgnoreCase("spark_catalog")) {
      rest = parts.subList(1, parts.size());
    } else if (parts.size() > 1 && parts.get(0).equals("iceberg")) {
      catalog = "iceberg";
      rest = parts.subList(1, parts.size());
    }
    String namespace =
        rest.size() == 1
            ? current
            : String.join(".", rest.subList(0, rest.size() - 1)).toLowerCase(Locale.ROOT);
    if (catalog.equals("iceberg")) {
      // marketing.t.snapshots: the table marketing.t's metadata (or a table under it).
      return namespace.equals("marketing") || namespace.startsWith("marketing.");
    }
    return namespace.equals("marketing")
        || namespace.equals("shared")
        || namespace.equals("scratch_bob");
  }
}
