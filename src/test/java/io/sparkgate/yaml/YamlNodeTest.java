package io.sparkgate.yaml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

final class YamlNodeTest {
  /** Stands for ConfigException or PolicyException: errors are raised as whatever the caller asks for. */
  static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Refused(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private static YamlNode parse(String yaml) {
    return YamlNode.parse("dir/t.yaml", new StringReader(yaml), Refused::new);
  }

  private static String refused(String yaml) {
    return assertThrows(Refused.class, () -> parse(yaml)).getMessage();
  }

  private static String refused(org.junit.jupiter.api.function.Executable read) {
    return assertThrows(Refused.class, read).getMessage();
  }

  @Test
  void duplicateKey_atAnyDepth_refusedWithBothLines_evenWhereNothingReadsIt() {
    assertEquals("dir/t.yaml:3: a: duplicate key (first at line 1)", refused("a: 1\nb: 2\na: 3\n"));
    assertEquals(
        "dir/t.yaml:5: a.b[1].c: duplicate key (first at line 4)",
        refused("a:\n  b:\n    - {c: 1}\n    - c: 1\n      c: 2\n"));
    assertEquals(
        "dir/t.yaml:2: x[0].k: duplicate key (first at line 2)", refused("x:\n  - {k: 1, k: 2}\n"));
  }

  @Test
  void typeError_namesFileLineAndKeyPath() {
    YamlNode root = parse("listen:\n  address: here\n  port: high\n");
    assertEquals(
        "dir/t.yaml:3: listen.port: must be a whole number, got 'high'",
        refused(() -> root.section("listen").integer("port", 1, 0, 65535)));
    assertEquals(
        "dir/t.yaml:1: listen: must be a string, got a mapping",
        refused(() -> root.optionalString("listen")));
    assertEquals(
        "dir/t.yaml:2: listen.address: must be a list of strings, got 'here'",
        refused(() -> root.section("listen").stringList("address")));
  }

  @Test
  void unknownKey_nested_namesItsPathAndTheValidKeys() {
    YamlNode root = parse("a:\n  b:\n    good: 1\n    typo: 2\n");
    assertEquals(
        "dir/t.yaml:4: a.b.typo: unknown key (valid keys here: good, other)",
        refused(() -> root.section("a").section("b").allowOnly("good", "other")));
  }

  @Test
  void aScope_namesTheRuleOrCase_andKeyPathsStartAgainFromIt() {
    YamlNode rule =
        parse("rules:\n  - name: r\n    when: {fact: [SQL, 3]}\n")
            .entries()
            .get("rules")
            .items()
            .get(0);
    assertEquals(
        "dir/t.yaml:3: rules[0].when: unknown key (valid keys here: name)",
        refused(() -> rule.allowOnly("name")));
    YamlNode named = rule.in("rule 'r'");
    YamlNode when = named.entries().get("when");
    assertEquals(
        "dir/t.yaml:3: rule 'r': when.fact[1]: must be a mapping, got '3'",
        refused(when.entries().get("fact").items().get(1)::entries));
    assertEquals(
        "dir/t.yaml:3: rule 'r': when: must be a list, got a mapping", refused(when::items));
    assertEquals(
        "dir/t.yaml:2: rule 'r': 'effect' is required",
        refused(
            () -> {
              throw named.error("'effect' is required");
            }));
    assertEquals(
        "dir/t.yaml:2: rule 'r': effect: is required",
        refused(
            () -> {
              throw named.errorAt("effect", "is required");
            }));
  }

  @Test
  void invalidYaml_namesLineAndColumn_andKeepsTheCause() {
    Refused e = assertThrows(Refused.class, () -> parse("a: 1\nb: [1, 2\n"));
    assertTrue(e.getMessage().startsWith("dir/t.yaml:3:1: not valid YAML: "), e.getMessage());
    assertInstanceOf(org.yaml.snakeyaml.error.MarkedYAMLException.class, e.getCause());
    assertTrue(refused("a: 1\n---\nb: 2\n").contains("not valid YAML"));
  }

  @Test
  void keysMustBeStrings_andMappingsAreNeverExpandedFromAliases() {
    assertEquals("dir/t.yaml:1: a key must be a string, got a list", refused("? [a, b]\n: 1\n"));
    assertTrue(refused("base: &b {x: 1}\ncopy: *b\n").startsWith("dir/t.yaml: not valid YAML: "));
    assertEquals("v", parse("a: &v v\nb: *v\n").entries().get("b").scalar());
  }

  @Test
  void emptyDocument_readsAsNull_andTheTopMustBeAMapping() {
    assertTrue(parse("").isNull());
    assertTrue(parse("# only a comment\n").isNull());
    assertEquals(
        "dir/t.yaml:1: the top level must be a mapping, got a list",
        refused(parse("- a\n")::entries));
  }

  @Test
  void scalars_readAsWritten_settingsTypedAsYamlReadsThem() {
    YamlNode root =
        parse(
            "version: 3.50\nflag: on\nquoted: 'on'\nn: 1_000\noctal: 017\nbig: 99999999999\n"
                + "size: 4 KiB\nwait: 50us\nempty:\nlist: [a, 7]\n");
    Map<String, YamlNode> m = root.entries();
    assertEquals("3.50", m.get("version").scalar());
    assertEquals("on", m.get("flag").scalar());
    assertTrue(root.bool("flag", false));
    assertEquals(
        "dir/t.yaml:3: quoted: must be true or false, got 'on'",
        refused(() -> root.bool("quoted", false)));
    assertEquals(
        "dir/t.yaml:2: flag: must be a string, got 'on'",
        refused(() -> root.optionalString("flag")));
    assertEquals("3.50", root.string("version", ""));
    assertEquals(1000, root.integer("n", 0, 0, 10_000));
    assertEquals(
        "dir/t.yaml:5: octal: must be a whole number, got '017'",
        refused(() -> root.integer("octal", 0, 0, 100)));
    assertEquals(
        "dir/t.yaml:6: big: must be between 0 and 100, got 99999999999",
        refused(() -> root.integer("big", 0, 0, 100)));
    assertEquals(4096, root.bytes("size", 0, 0, Long.MAX_VALUE));
    assertEquals(
        Duration.ofNanos(50_000),
        root.duration("wait", null, Duration.ZERO, Duration.ofSeconds(1)));
    assertEquals(
        "dir/t.yaml:8: wait: must be between 0s and 10us, got 50us",
        refused(() -> root.duration("wait", null, Duration.ZERO, Duration.ofNanos(10_000))));
    assertFalse(root.has("empty"));
    assertEquals(7, root.integer("empty", 7, 0, 10));
    assertTrue(root.section("empty").entries().isEmpty());
    assertEquals(List.of("a", "7"), m.get("list").strings());
    assertEquals(
        "dir/t.yaml:10: list[1]: must be a non-empty string, got '7'",
        refused(() -> root.stringList("list")));
    assertEquals("dir/t.yaml:9: empty: must not be empty", refused(m.get("empty")::text));
  }
}
