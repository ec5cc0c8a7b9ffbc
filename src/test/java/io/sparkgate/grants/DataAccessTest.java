package io.sparkgate.grants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.yaml.YamlNode;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Grants checked over facts built by hand: which grant allows an access (the first in the file, wherever the
 * index keeps it), the placeholder, the two defaults, what cannot be resolved, and the section's errors. The
 * SQL, DataFrame and Catalog forms are policies/team-data_test.yaml's cases, over the real inspector.
 */
class DataAccessTest {
  private static final String GRANTS =
      """
      default: deny
      grants:
        - name: any-catalog-reads
          to: {groups: [auditors]}
          tables: ["*.finance.*"]
          privileges: [select]
        - name: finance-team
          to: {groups: [finance]}
          tables: ["spark_catalog.finance.*", "iceberg.finance.*"]
          privileges: [select, modify]
        - name: finance-glob-namespaces
          to: {groups: [finance]}
          tables: ["spark_catalog.finance_*.*"]
          privileges: [select]
        - name: own-scratch
          to: {principals: ["*"]}
          tables: ["spark_catalog.scratch_{principal}.*"]
          privileges: [all]
        - name: tenant-a
          to: {tenants: [a]}
          tables: ["spark_catalog.tenant_a.*"]
          privileges: [select]
        - name: bucket
          to: {groups: [finance]}
          paths: ["s3a://finance-data/*"]
          privileges: [select]
      """;

  private static DataAccess compile(String yaml) {
    YamlNode node =
        YamlNode.parse("grants.yaml", new StringReader(yaml), IllegalArgumentException::new);
    return DataAccessReader.read(node, Set.of("some-rule"));
  }

  private static Fact read(String catalog, String database, String name) {
    return new Fact(
        Fact.Kind.TABLE_READ,
        "sql",
        Map.of("catalog", catalog, "database", database, "name", name, "where", "sql"));
  }

  private static Fact write(String subkind, String catalog, String database, String name) {
    return new Fact(
        Fact.Kind.TABLE_WRITE,
        subkind,
        Map.of("catalog", catalog, "database", database, "name", name, "where", "sql"));
  }

  private static Fact path(String path, String context) {
    return new Fact(
        Fact.Kind.PATH,
        "uri",
        Map.of("path", path, "scheme", "s3a", "context", context, "where", "sql"));
  }

  private static Verdict check(DataAccess d, String who, List<String> groups, Fact... facts) {
    return d.check(who, groups, Optional.empty(), Accesses.of(Facts.of(List.of(facts))));
  }

  @Test
  void theFirstGrantInTheFileIsCited_whateverIndexHoldsIt() {
    DataAccess d = compile(GRANTS);
    // any-catalog-reads (a catalog glob) comes first in the file; finance-team is indexed by
    // namespace.
    Verdict v =
        check(d, "alice", List.of("finance", "auditors"), read("spark_catalog", "finance", "pay"));
    assertTrue(v.allowed());
    assertEquals("any-catalog-reads", v.granted().get(0).grant());
    Verdict w = check(d, "alice", List.of("finance"), read("spark_catalog", "finance", "pay"));
    assertEquals("finance-team", w.granted().get(0).grant());
  }

  @Test
  void namesCompareInAnyCase_identitiesExactly() {
    DataAccess d = compile(GRANTS);
    assertTrue(
        check(d, "a", List.of("finance"), read("spark_catalog", "FINANCE", "Pay")).allowed());
    assertFalse(
        check(d, "a", List.of("Finance"), read("spark_catalog", "finance", "pay")).allowed());
  }

  @Test
  void privilegesAreEachChecked() {
    DataAccess d = compile(GRANTS);
    assertTrue(
        check(d, "a", List.of("finance"), write("insertIntoTable", "iceberg", "finance", "t"))
            .allowed());
    Verdict drop = check(d, "a", List.of("finance"), write("dropTable", "iceberg", "finance", "t"));
    assertEquals(Privilege.DROP, drop.refused().privilege());
    assertEquals("table iceberg.finance.t", drop.refused().object());
    Verdict globbed =
        check(
            d,
            "a",
            List.of("finance"),
            write("insertIntoTable", "spark_catalog", "finance_x", "t"));
    assertEquals(Privilege.MODIFY, globbed.refused().privilege(), "finance_* grants select only");
  }

  @Test
  void placeholder_isTheCallersNameAsOneIdentifier() {
    DataAccess d = compile(GRANTS);
    assertTrue(check(d, "carol", List.of(), read("spark_catalog", "scratch_carol", "t")).allowed());
    assertTrue(check(d, "Carol", List.of(), read("spark_catalog", "scratch_carol", "t")).allowed());
    assertFalse(
        check(d, "carol", List.of(), read("spark_catalog", "scratch_alice", "t")).allowed());
    for (String odd : List.of("*", "ca?ol", "x.y", "`x`", "")) {
      assertFalse(
          check(d, odd, List.of(), read("spark_catalog", "scratch_" + odd, "t")).allowed(), odd);
    }
  }

  @Test
  void tenantsMatchOnlyPrincipalsWithThatTenant() {
    DataAccess d = compile(GRANTS);
    Accesses reads = Accesses.of(Facts.of(List.of(read("spark_catalog", "tenant_a", "t"))));
    assertTrue(d.check("x", List.of(), Optional.of("a"), reads).allowed());
    assertFalse(d.check("x", List.of(), Optional.of("b"), reads).allowed());
    assertFalse(d.check("x", List.of(), Optional.empty(), reads).allowed());
  }

  @Test
  void paths_granted_readOnlyContextsNeedSelectOnly() {
    DataAccess d = compile(GRANTS);
    assertTrue(
        check(d, "a", List.of("finance"), path("s3a://finance-data/x/", "DataSource")).allowed());
    Verdict write =
        check(d, "a", List.of("finance"), path("s3a://finance-data/x/", "WriteOperation"));
    assertEquals(Privilege.MODIFY, write.refused().privilege());
    assertFalse(
        check(d, "a", List.of("finance"), path("s3a://finance-data2/x", "DataSource")).allowed());
  }

  @Test
  void defaultAllow_restrictsOnlyWhatSomeGrantCovers() {
    DataAccess d = compile(GRANTS.replace("default: deny", "default: allow"));
    Verdict free = check(d, "bob", List.of(), read("spark_catalog", "default", "t"));
    assertTrue(free.allowed());
    assertEquals(DataAccess.BY_DEFAULT, free.granted().get(0).grant());
    assertFalse(check(d, "bob", List.of(), read("spark_catalog", "finance", "t")).allowed());
    // Someone's scratch namespace is covered by the placeholder grant for its owner alone.
    assertFalse(check(d, "bob", List.of(), read("spark_catalog", "scratch_alice", "t")).allowed());
  }

  private static Fact iceberg(Fact.Kind kind, String subkind, String namespace, String name) {
    return new Fact(
        kind,
        subkind,
        Map.of(
            "catalog", "iceberg",
            "database", namespace,
            "name", name,
            "catalog_impl", "org.apache.iceberg.spark.SparkCatalog",
            "where", "sql"));
  }

  /**
   * An Iceberg name like finance.ledger.snapshots is the table of that name if the catalog holds one, else
   * ledger's metadata: the usual meaning is checked as any access, the other wherever a grant covers it.
   */
  @Test
  void icebergMetadataNames_checkBothMeanings_theUnusualOneWhereAGrantCoversIt() {
    DataAccess deny = compile(GRANTS);
    DataAccess allow = compile(GRANTS.replace("default: deny", "default: allow"));
    Fact snapshots = iceberg(Fact.Kind.TABLE_READ, "sql", "finance.ledger", "snapshots");
    assertTrue(check(deny, "a", List.of("finance"), snapshots).allowed(), "ledger's snapshots");
    assertFalse(check(deny, "b", List.of("marketing"), snapshots).allowed());
    // A pattern that covers both meanings (an auditors' *.*.*) says nothing of whose the other is;
    // one that
    // covers the nested table alone (a namespace finance.ledger of its own) makes it someone's.
    String catchAll =
        GRANTS
            + "  - {name: audit-all, to: {groups: [auditors]}, tables: ['*.*.*'], privileges: [select]}\n";
    assertTrue(check(compile(catchAll), "a", List.of("finance"), snapshots).allowed());
    String nested =
        GRANTS
            + "  - {name: ledger-ns, to: {groups: [ops]}, tables: ['iceberg.finance.ledger.*'],"
            + " privileges: [select]}\n";
    Verdict nestedOther = check(compile(nested), "a", List.of("finance"), snapshots);
    assertEquals("table iceberg.finance.ledger.snapshots", nestedOther.refused().object());
    assertTrue(check(compile(nested), "o", List.of("ops", "finance"), snapshots).allowed());
    // finance.history: finance's table history, or the history of a table "finance" in the root.
    Fact history = iceberg(Fact.Kind.TABLE_READ, "sql", "finance", "history");
    assertTrue(check(deny, "a", List.of("finance"), history).allowed(), "its own table");
    Verdict other = check(allow, "b", List.of("marketing"), history);
    assertEquals(
        "table iceberg.finance.history",
        other.refused().object(),
        "finance's table, even where no grant is needed for the root table");
    assertFalse(
        check(
                allow,
                "b",
                List.of(),
                iceberg(Fact.Kind.TABLE_WRITE, "insertIntoTable", "finance", "files"))
            .allowed());
    // Creating one makes the table of that name, nothing else (finance-team has no create).
    Fact create = iceberg(Fact.Kind.TABLE_WRITE, "createTable", "finance", "history");
    Verdict created = check(allow, "a", List.of("finance"), create);
    assertEquals("table iceberg.finance.history", created.refused().object());
    assertEquals(Privilege.CREATE, created.refused().privilege());
    assertTrue(
        check(
                allow,
                "a",
                List.of("finance"),
                iceberg(Fact.Kind.TABLE_WRITE, "createTable", "x", "history"))
            .allowed(),
        "the root table finance is not asked for");
  }

  @Test
  void unresolved_isRefusedWhileGrantsAreInForce() {
    DataAccess d = compile(GRANTS);
    Verdict v =
        check(
            d,
            "a",
            List.of("finance"),
            new Fact(
                Fact.Kind.TABLE_WRITE, "someFutureStatement", Map.of("catalog", "c", "name", "t")));
    assertNull(v.refused());
    assertTrue(v.unresolved().contains("someFutureStatement"), v.unresolved());
    DataAccess none = compile("default: allow\n");
    assertTrue(
        none.check(
                "a", List.of(), Optional.empty(), Accesses.of(Facts.of(List.of(path("x/..", "c")))))
            .allowed(),
        "no grants under default allow: nothing is checked");
  }

  @Test
  void manyGrants_eachNamespaceFindsItsOwn() {
    StringBuilder yaml = new StringBuilder("default: deny\ngrants:\n");
    for (int i = 0; i < 2000; i++) {
      yaml.append("  - {name: g")
          .append(i)
          .append(", to: {groups: [team")
          .append(i)
          .append("]}, tables: [\"spark_catalog.ns")
          .append(i)
          .append(".*\"], privileges: [select]}\n");
    }
    DataAccess d = compile(yaml.toString());
    List<Fact> facts = new ArrayList<>();
    facts.add(read("spark_catalog", "ns1234", "t"));
    Verdict v = d.check("x", List.of("team1234"), Optional.empty(), Accesses.of(Facts.of(facts)));
    assertEquals("g1234", v.granted().get(0).grant());
    assertFalse(
        d.check("x", List.of("team1235"), Optional.empty(), Accesses.of(Facts.of(facts)))
            .allowed());
  }

  @Test
  void mistakes_areRefusedWithWhatIsWrong() {
    for (var bad :
        Map.of(
                "default: deny\ngrants: [{name: g, to: {groups: [x]}, tables: [finance.t], privileges: [select]}]",
                "not catalog.namespace.table",
                "default: deny\ngrants: [{name: g, to: {groups: [x]}, tables: [a.b.c], privileges: [read]}]",
                "unknown privilege 'read'",
                "default: deny\ngrants: [{name: g, to: {}, tables: [a.b.c], privileges: [select]}]",
                "names no one",
                "default: deny\ngrants: [{name: g, to: {groups: [x]}, paths: ['/data/*'], privileges: [select]}]",
                "needs a scheme",
                "default: deny\ngrants: [{name: some-rule, to: {groups: [x]}, tables: [a.b.c], privileges: [select]}]",
                "a rule already has this name",
                "default: deny\ngrants: [{name: g, to: {groups: [x]}, tables: ['a.s_{principal}*.c'], privileges: [select]}]",
                "takes no wildcard",
                "grants: []",
                "'default' is required")
            .entrySet()) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> compile(bad.getKey()), bad.getKey());
      assertTrue(e.getMessage().contains(bad.getValue()), e.getMessage());
    }
  }

  /** Grants are named as rules are (ItemNames): the same characters, one name each, known keys only. */
  @Test
  void names_asRulesAre() {
    String g = "{name: g, to: {groups: [x]}, tables: [a.b.c], privileges: [select]}";
    for (var bad :
        Map.of(
                "grants: [" + g + ", " + g + "]",
                "grants.yaml:2: grant 'g': another grant already has this name",
                "grants: [{to: {groups: [x]}}]",
                "grants.yaml:2: grant #1: 'name' is required",
                "grants: [{name: G, to: {groups: [x]}}]",
                "grants.yaml:2: grant 'G': name: must be lower case letters, digits, '-', '_' or '.'",
                "grants: [{name: g, whom: {groups: [x]}}]",
                "grants.yaml:2: grant 'g': whom: unknown key (valid keys here: description, name,"
                    + " paths, privileges, tables, to)")
            .entrySet()) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> compile("default: deny\n" + bad.getKey()));
      assertEquals(bad.getValue(), e.getMessage());
    }
  }
}
