package io.sparkgate.grants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sparkgate.policy.Effect;
import io.sparkgate.policy.PolicyCompiler;
import java.io.StringReader;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Access review over a compiled policy: who may reach a table or path, and what a principal holds. */
final class DataAccessQueriesTest {
  private static final DataAccess GRANTS =
      new PolicyCompiler(Effect.DENY, Set.of())
          .compile(
              "grants.yaml",
              new StringReader(
                  """
                  default: allow
                  rules: []
                  data_access:
                    default: deny
                    grants:
                      - name: finance-team
                        to: {groups: [finance]}
                        tables: ["iceberg.finance.*", "spark_catalog.finance.*"]
                        privileges: [select, modify]
                      - name: payroll-readers
                        to: {principals: [carol], tenants: [acme]}
                        tables: ["iceberg.finance.payroll"]
                        privileges: [select]
                      - name: own-scratch
                        to: {principals: ["*"]}
                        tables: ["spark_catalog.scratch_{principal}.*", "u_{principal}.{principal}.t"]
                        privileges: [all]
                      - name: finance-bucket
                        to: {groups: [finance]}
                        paths: ["s3a://finance-data/*", "s3a://finance-data/raw/*"]
                        privileges: [select]
                  """))
          .dataAccess();

  @Test
  void who_listsEveryCoveringGrant_inPolicyOrder() {
    List<Coverage> who = GRANTS.who("iceberg.finance.payroll");
    assertEquals(
        List.of(
            new Coverage(
                "finance-team",
                "groups [finance]",
                List.of("select", "modify"),
                "iceberg.finance.*",
                Optional.empty()),
            new Coverage(
                "payroll-readers",
                "principals [carol]; tenants [acme]",
                List.of("select"),
                "iceberg.finance.payroll",
                Optional.empty())),
        who);
    assertEquals(List.of(), GRANTS.who("iceberg.marketing.payroll"));
  }

  @Test
  void who_namesThePrincipalAPlaceholderStandsFor() {
    Coverage c = GRANTS.who("spark_catalog.scratch_alice.t").get(0);
    assertEquals("own-scratch", c.grant());
    assertEquals("spark_catalog.scratch_{principal}.*", c.pattern());
    assertEquals(Optional.of("alice"), c.principal());
    assertEquals(
        List.of("select", "modify", "create", "alter", "drop", "maintain"), c.privileges());
  }

  @Test
  void who_placeholderInSeveralParts_mustNameOnePrincipal() {
    assertEquals(Optional.of("bob"), GRANTS.who("u_bob.Bob.t").get(0).principal());
    assertEquals(List.of(), GRANTS.who("u_bob.eve.t"));
    // A nested namespace holds a dot: no principal's name can.
    assertEquals(List.of(), GRANTS.who("spark_catalog.scratch_a.b.t"));
    assertEquals(List.of(), GRANTS.who("spark_catalog.scratch_.t"));
  }

  @Test
  void who_aNameWithoutThreeParts_isRefused() {
    for (String bad : List.of("payroll", "finance.payroll", ".a.b", "a..b", "a.b.")) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> GRANTS.who(bad));
      assertEquals(
          "'" + bad + "' is not catalog.namespace.name (e.g. spark_catalog.finance.payroll)",
          e.getMessage());
    }
  }

  @Test
  void whoPath_onePerMatchingGlob() {
    assertEquals(
        List.of("s3a://finance-data/*", "s3a://finance-data/raw/*"),
        GRANTS.whoPath("s3a://finance-data/raw/x.csv").stream().map(Coverage::pattern).toList());
    assertEquals(List.of(), GRANTS.whoPath("s3a://other/x"));
  }

  @Test
  void what_listsHeldGrants_withThePlaceholderFilledIn() {
    List<Holding> held = GRANTS.what("alice", List.of("finance"), Optional.empty());
    assertEquals(
        List.of("finance-team", "own-scratch", "finance-bucket"),
        held.stream().map(Holding::grant).toList());
    assertEquals(List.of("spark_catalog.scratch_alice.*", "u_alice.alice.t"), held.get(1).tables());
    assertEquals(List.of("s3a://finance-data/*", "s3a://finance-data/raw/*"), held.get(2).paths());

    assertEquals(
        List.of("payroll-readers", "own-scratch"),
        GRANTS.what("carol", List.of(), Optional.of("acme")).stream().map(Holding::grant).toList());
    assertEquals(
        List.of("own-scratch"),
        GRANTS.what("carol", List.of(), Optional.empty()).stream().map(Holding::grant).toList());
  }

  @Test
  void what_aNameThatCannotBeAnIdentifier_holdsNoPlaceholderTable() {
    assertEquals(List.of(), GRANTS.what("a.b", List.of(), Optional.empty()));
  }
}
