package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.inspect.Fact;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code - include: file} in a policy's rules: where the rules go, what is refused, and reloading. */
final class PolicyIncludeTest {
  private static final String BASE =
      """
      default: deny
      rules:
        - {name: no-udf, description: d, effect: deny, when: {fact: USER_CODE}}
        - {name: base-allow, description: d, effect: allow, when: {fact: TABLE_READ}}
      """;

  @TempDir Path dir;
  private final PolicyCompiler compiler = new PolicyCompiler(Effect.DENY, Set.of());

  private Path write(String name, String yaml) throws Exception {
    Path f = dir.resolve(name);
    Files.createDirectories(f.getParent());
    return Files.writeString(f, yaml);
  }

  private String error(Path file) {
    return assertThrows(PolicyException.class, () -> compiler.compile(file)).getMessage();
  }

  @Test
  void includedRulesAreSplicedInWhereTheIncludeStands_andTheIncludingDefaultApplies()
      throws Exception {
    write("base/base.yaml", BASE);
    Path site =
        write(
            "site.yaml",
            """
        default: allow
        rules:
          - {name: first, description: d, effect: audit, when: {fact: TABLE_READ}}
          - include: base/base.yaml
          - {name: last, description: d, effect: deny, when: {fact: TABLE_READ}}
        """);
    Policy p = compiler.compile(site);
    assertEquals(List.of("first", "no-udf", "base-allow", "last"), p.ruleNames());
    assertEquals(
        Effect.ALLOW, p.defaultEffect(), "the including file's default, not the included one's");
    assertEquals(List.of(site.toString(), dir.resolve("base/base.yaml").toString()), p.files());
    // base-allow comes before last, so a read is allowed by it; a UDF is refused by the included
    // rule.
    assertEquals(
        "base-allow",
        Policies.decide(p, Policies.fact(Fact.Kind.TABLE_READ, "sql", "name", "t")).rule());
    assertEquals(
        "no-udf", Policies.decide(p, Policies.fact(Fact.Kind.USER_CODE, "python_udf")).rule());
  }

  @Test
  void includesNestAndResolveFromTheIncludingFilesDirectory() throws Exception {
    write("common/common.yaml", "rules:\n  - {name: common, description: d, effect: allow}\n");
    write(
        "common/team.yaml",
        "rules:\n  - include: common.yaml\n  - {name: team, description: d, effect: allow}\n");
    Path site = write("site.yaml", "rules:\n  - include: common/team.yaml\n");
    assertEquals(List.of("common", "team"), compiler.compile(site).ruleNames());
  }

  @Test
  void mistakesAreRefusedWithTheFileAndLine() throws Exception {
    write("base.yaml", BASE);
    Path missing = write("missing.yaml", "rules:\n  - include: nope.yaml\n");
    assertTrue(
        error(missing).contains("missing.yaml:2: rules[0].include: cannot include 'nope.yaml'"),
        error(missing));

    Path duplicate =
        write(
            "dup.yaml",
            "rules:\n  - include: base.yaml\n  - {name: no-udf, description: d, effect: allow}\n");
    assertTrue(
        error(duplicate)
            .contains("dup.yaml:3: rule 'no-udf': another rule already has this name (in "),
        error(duplicate));

    write("a.yaml", "rules:\n  - include: b.yaml\n");
    Path b = write("b.yaml", "rules:\n  - include: a.yaml\n");
    assertTrue(error(b).contains("include cycle"), error(b));
    Path self = write("self.yaml", "rules:\n  - include: self.yaml\n");
    assertTrue(error(self).contains("self.yaml:2: rules[0].include: include cycle"), error(self));

    Path twice = write("twice.yaml", "rules:\n  - include: base.yaml\n  - include: ./base.yaml\n");
    assertTrue(
        error(twice).contains("twice.yaml:3: rules[1].include: './base.yaml' is already included"),
        error(twice));

    Path extra = write("extra.yaml", "rules:\n  - {include: base.yaml, name: x}\n");
    assertTrue(
        error(extra)
            .contains("extra.yaml:2: rules[0].name: unknown key (valid keys here: include)"),
        error(extra));

    write("broken.yaml", "rules:\n  - {name: b, description: d, effect: alow}\n");
    Path includesBroken = write("top.yaml", "rules:\n  - include: broken.yaml\n");
    assertTrue(
        error(includesBroken).contains("broken.yaml:2: rule 'b': effect: must be"),
        error(includesBroken));
  }

  @Test
  void aChangeToAnIncludedFileIsReloaded_andABrokenOneKeepsTheLastGoodPolicy() throws Exception {
    Path base = write("base.yaml", BASE);
    Path site = write("site.yaml", "rules:\n  - include: base.yaml\n");
    PolicyStore store = new PolicyStore(site, compiler);
    assertFalse(store.reload(), "nothing changed");

    Files.writeString(base, BASE + "  - {name: added, description: d, effect: allow}\n");
    assertTrue(store.reload(), "the included file changed");
    assertEquals(List.of("no-udf", "base-allow", "added"), store.current().ruleNames());

    Files.writeString(base, "rules: 3\n");
    assertFalse(store.reload());
    assertEquals(List.of("no-udf", "base-allow", "added"), store.current().ruleNames());
    assertTrue(store.lastError().contains("base.yaml:1: rules: must be a list"), store.lastError());

    Files.delete(base);
    assertFalse(store.reload(), "a vanished include keeps the last good policy");
    assertEquals(3, store.current().ruleNames().size());

    // A newly included file is picked up, and its later changes too.
    write("more.yaml", "rules:\n  - {name: more, description: d, effect: allow}\n");
    Files.writeString(site, "rules:\n  - include: more.yaml\n");
    assertTrue(store.reload());
    assertEquals(List.of("more"), store.current().ruleNames());
    Files.writeString(
        dir.resolve("more.yaml"), "rules:\n  - {name: more2, description: d, effect: allow}\n");
    assertTrue(store.reload());
    assertEquals(List.of("more2"), store.current().ruleNames());
  }
}
