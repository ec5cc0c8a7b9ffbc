package io.sparkgate.policy;

import static io.sparkgate.policy.Policies.compile;
import static io.sparkgate.policy.Policies.compileError;
import static io.sparkgate.policy.Policies.decide;
import static io.sparkgate.policy.Policies.fact;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact.Kind;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

final class PolicyLanguageTest {
  private static final String RULES =
      """
      default: allow
      rules:
        - name: no-udf
          description: d
          effect: deny
          when: {fact: USER_CODE, subkind: [java_udf, scala_udf]}
          message: "no {subkind} here ({rule})"
        - name: admins-may-set
          description: d
          effect: allow
          match: {groups: [admins]}
          when: {fact: CONFIG_SET}
        - name: no-legacy
          description: d
          effect: deny
          when:
            fact: CONFIG_SET
            attr: {key: ["spark.sql.legacy.*", {regex: "spark\\\\.datasource\\\\..*"}]}
          message: "cannot set {key} to {value}"
        - name: not-and-all
          description: d
          effect: deny
          status: failed_precondition
          when:
            all:
              - fact: TABLE_READ
              - not: {fact: TABLE_READ, attr: {database: public}}
      """;

  @Test
  void firstMatchingRuleWins_andMessagesNameTheFact() {
    Policy p = compile(RULES);
    Decision d = decide(p, fact(Kind.USER_CODE, "scala_udf"));
    assertEquals(Effect.DENY, d.effect());
    assertEquals("no-udf", d.rule());
    assertEquals("no scala_udf here (no-udf)", d.message());
    assertEquals(Effect.ALLOW, decide(p, fact(Kind.USER_CODE, "python_udf")).effect());
    assertEquals("default", decide(p, fact(Kind.SQL, "query")).rule());
  }

  @Test
  void globsAreCaseInsensitive_regexesAreNot_valuesAreNeverShown() {
    Policy p = compile(RULES);
    // A data source option's key: Spark reads options ignoring case, and so do globs.
    Decision d =
        decide(p, fact(Kind.CONFIG_SET, "option", "key", "SPARK.SQL.LEGACY.x", "value", "hunter2"));
    assertEquals("no-legacy", d.rule());
    assertEquals("cannot set SPARK.SQL.LEGACY.x to <value not shown>", d.message());
    assertEquals(
        "no-legacy",
        decide(p, fact(Kind.CONFIG_SET, "option", "key", "spark.datasource.jdbc.url")).rule());
    assertEquals(
        Effect.ALLOW,
        decide(p, fact(Kind.CONFIG_SET, "option", "key", "SPARK.DATASOURCE.jdbc.url")).effect());
  }

  /**
   * Spark looks configuration keys up as written: to it SPARK.SQL.LEGACY.x is not a legacy flag, and
   * Spark.Sql.Shuffle.Partitions not the listed key, so globs on a config key compare case as well, in
   * allowlists (attr_not) as in denylists; a data source option's key still ignores case.
   */
  @Test
  void configKeys_compareExactly_optionKeysIgnoreCase() {
    Policy p = compile(RULES);
    for (Kind kind : List.of(Kind.CONFIG_SET, Kind.CONFIG_UNSET, Kind.CONFIG_READ)) {
      Policy deny =
          compile(
              """
              default: allow
              rules:
                - name: no-legacy
                  description: d
                  effect: deny
                  when: {fact: %s, attr: {key: "spark.sql.legacy.*"}}
              """
                  .formatted(kind));
      assertEquals(
          "no-legacy", decide(deny, fact(kind, "sql", "key", "spark.sql.legacy.x")).rule());
      assertEquals("default", decide(deny, fact(kind, "sql", "key", "SPARK.SQL.LEGACY.x")).rule());
    }
    Policy allowlist =
        compile(
            """
            default: allow
            rules:
              - name: config-allowlist
                description: d
                effect: deny
                when:
                  fact: CONFIG_SET
                  attr_not: {key: [spark.sql.shuffle.partitions, "spark.sql.adaptive.*"]}
            """);
    for (String subkind : List.of("config_rpc", "sql", "pipeline")) {
      assertEquals(
          "default",
          decide(allowlist, fact(Kind.CONFIG_SET, subkind, "key", "spark.sql.shuffle.partitions"))
              .rule());
      assertEquals(
          "default",
          decide(allowlist, fact(Kind.CONFIG_SET, subkind, "key", "spark.sql.adaptive.enabled"))
              .rule());
      assertEquals(
          "config-allowlist",
          decide(allowlist, fact(Kind.CONFIG_SET, subkind, "key", "Spark.Sql.Shuffle.Partitions"))
              .rule());
      assertEquals(
          "config-allowlist",
          decide(allowlist, fact(Kind.CONFIG_SET, subkind, "key", "spark.sql.Adaptive.enabled"))
              .rule());
    }
    assertEquals(
        "default",
        decide(allowlist, fact(Kind.CONFIG_SET, "option", "key", "SPARK.SQL.SHUFFLE.PARTITIONS"))
            .rule());
    assertEquals(Effect.ALLOW, decide(p, fact(Kind.CONFIG_SET, "sql", "key", "x")).effect());
  }

  @Test
  void matchOnGroups() {
    Policy p = compile(RULES);
    Decision d =
        decide(
            p,
            List.of("admins"),
            BackendProfile.UNKNOWN,
            fact(Kind.CONFIG_SET, "", "key", "spark.sql.legacy.x"));
    assertEquals("admins-may-set", d.rule());
    assertEquals(Effect.ALLOW, d.effect());
  }

  @Test
  void notAndAll_andStatus() {
    Policy p = compile(RULES);
    Decision d = decide(p, fact(Kind.TABLE_READ, "sql", "database", "secret"));
    assertEquals("not-and-all", d.rule());
    assertEquals(Status.Code.FAILED_PRECONDITION, d.code());
    assertEquals(
        Effect.ALLOW, decide(p, fact(Kind.TABLE_READ, "sql", "database", "public")).effect());
  }

  @Test
  void defaultDenyWhenTheFileSaysNothing() {
    Policy p = compile("rules: []");
    Decision d = decide(p, fact(Kind.SQL, "query"));
    assertEquals(Effect.DENY, d.effect());
    assertEquals("default", d.rule());
  }

  @Test
  void backendConditions_failClosedWhileTheProfileIsUnknown() {
    Policy p =
        compile(
            """
        default: allow
        rules:
          - name: mixed
            description: d
            effect: deny
            when:
              all:
                - backend: {extensions_all: [a.Hudi, b.Iceberg]}
                - fact: TIME_TRAVEL
        """);
    BackendProfile both =
        new BackendProfile("3.5.7", List.of("a.Hudi", "b.Iceberg"), Map.of(), null);
    BackendProfile one = new BackendProfile("3.5.7", List.of("b.Iceberg"), Map.of(), null);
    assertEquals(
        Effect.DENY, decide(p, List.of(), both, fact(Kind.TIME_TRAVEL, "VERSION")).effect());
    assertEquals(
        Effect.ALLOW, decide(p, List.of(), one, fact(Kind.TIME_TRAVEL, "VERSION")).effect());
    Decision unknown = decide(p, List.of(), null, fact(Kind.TIME_TRAVEL, "VERSION"));
    assertEquals(Effect.DENY, unknown.effect());
    assertEquals(Status.Code.UNAVAILABLE, unknown.code());
    // Indexed by TIME_TRAVEL: requests without one never consult the profile.
    assertEquals(Effect.ALLOW, decide(p, List.of(), null, fact(Kind.SQL, "query")).effect());
  }

  @Test
  void shadowRulesRecordAndDoNotDecide() {
    Policy p =
        compile(
            """
        default: allow
        rules:
          - name: try-out
            description: d
            effect: deny
            mode: shadow
            when: {fact: SQL}
          - name: watch
            description: d
            effect: audit
            when: {fact: SQL}
        """);
    Decision d = decide(p, fact(Kind.SQL, "query"));
    assertEquals(Effect.ALLOW, d.effect());
    assertEquals(List.of("deny:try-out"), d.shadow());
    assertEquals(List.of("watch"), d.audits());
  }

  @Test
  void compileErrorsNameFileLineRuleAndProblem() {
    String e =
        compileError(
            """
        rules:
          - name: ok
            description: d
            effect: deny
          - name: typo
            description: d
            effect: deny
            whne: {fact: SQL}
        """);
    assertTrue(
        e.startsWith(
            "test.yaml:8: rule 'typo': whne: unknown key (valid keys here: description, effect, "),
        e);

    e =
        compileError(
            """
        rules:
          - name: bad-kind
            description: d
            effect: deny
            when:
              fact: USERCODE
        """);
    assertTrue(
        e.startsWith("test.yaml:6: rule 'bad-kind': when.fact: unknown fact kind 'USERCODE'"), e);

    e =
        compileError(
            """
        rules:
          - name: bad-regex
            description: d
            effect: deny
            when: {fact: SQL, attr: {sql: {regex: "("}}}
        """);
    assertTrue(
        e.startsWith("test.yaml:5: rule 'bad-regex': when.attr.sql.regex: invalid regex"), e);

    e =
        compileError(
            """
        rules:
          - name: twice
            description: d
            effect: allow
          - name: twice
            description: d
            effect: deny
        """);
    assertTrue(e.startsWith("test.yaml:5: rule 'twice': another rule already has this name"), e);

    e =
        compileError(
            """
        rules:
          - name: rw
            description: d
            effect: rewrite
            rewriter: nope
        """);
    assertTrue(e.startsWith("test.yaml:5: rule 'rw': rewriter: unknown rewriter 'nope'"), e);

    e =
        compileError(
            """
        rules:
          - name: eff
            description: d
            effect: block
        """);
    assertTrue(
        e.equals(
            "test.yaml:4: rule 'eff': effect: must be deny, allow, audit or rewrite, got 'block'"),
        e);

    e =
        compileError(
            "rules:\n  - name: x\n    description: d\n    effect: deny\n    message: \"bad {brace\"\n");
    assertTrue(e.contains("rule 'x': message has an unbalanced"), e);

    e = compileError("rules: [\n");
    assertTrue(e.startsWith("test.yaml:2:1: not valid YAML: "), e);

    e =
        compileError(
            """
        rules:
          - description: d
            effect: deny
        """);
    assertTrue(e.startsWith("test.yaml:2: rule #1: 'name' is required"), e);
  }

  @Test
  void duplicateKeys_refusedAtAnyDepth_namingFileAndBothLines() {
    String e =
        compileError(
            """
        rules:
          - name: twice
            description: d
            effect: allow
            effect: deny
        """);
    assertEquals("test.yaml:5: rules[0].effect: duplicate key (first at line 4)", e);

    e =
        compileError(
            """
        rules:
          - name: nested
            description: d
            effect: deny
            when:
              fact: SQL
              attr: {sql: "*x*", sql: "*y*"}
        """);
    assertEquals("test.yaml:7: rules[0].when.attr.sql: duplicate key (first at line 7)", e);

    e = compileError("default: allow\nrules: []\ndefault: deny\n");
    assertEquals("test.yaml:3: default: duplicate key (first at line 1)", e);
  }

  @Test
  void typeErrorsAndNestedUnknownKeys_nameTheKeyPathInTheRule() {
    String e =
        compileError(
            """
        rules:
          - name: m
            description: d
            effect: deny
            match:
              rpc: ExecutePlan
              principals: [alice]
        """);
    assertTrue(
        e.startsWith("test.yaml:7: rule 'm': match.principals: unknown key (valid keys here: "), e);

    e =
        compileError(
            """
        rules:
          - name: t
            description: d
            effect: deny
            when: {fact: SQL, attr: {sql: [[nested]]}}
        """);
    assertEquals("test.yaml:5: rule 't': when.attr.sql[0]: nested lists are not allowed", e);

    e =
        compileError(
            """
        rules:
          - name: s
            description: d
            effect: {deny: true}
        """);
    assertEquals("test.yaml:4: rule 's': effect: must be a string, got a mapping", e);
  }

  /** Who a rule applies to is read as routes and quotas read it: exact globs, never a regex. */
  @Test
  void identitiesInAMatch_areGlobs_notRegexes() {
    for (String key :
        List.of("tenant: [acme, {regex: 't[0-9]+'}]", "except_principals: {regex: 'svc-.*'}")) {
      String e =
          compileError(
              "rules:\n  - name: r\n    description: d\n    effect: deny\n    match:\n      "
                  + key
                  + "\n");
      assertEquals(
          "test.yaml:6: rule 'r': match."
              + key.substring(0, key.indexOf(':'))
              + ": takes globs of identities, matched exactly as in routes and quotas; not a"
              + " {regex: ...}",
          e);
    }
  }
}
