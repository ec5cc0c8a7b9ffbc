package io.sparkgate.call;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.config.Glob;
import io.sparkgate.config.MatchConfig;
import io.sparkgate.grants.GrantProbe;
import io.sparkgate.policy.PolicyProbe;
import io.sparkgate.quota.QuotaProbe;
import io.sparkgate.route.RouteProbe;
import io.sparkgate.testing.Principals;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The one glob and the one reading of a {@code match:} block: what a pattern matches, and that routes, quota
 * overrides, policy rules and data access grants, built from the same block, take the same principals.
 */
final class MatchBlockTest {

  // Globs.

  @Test
  void exact_matchesTheWholeValueOnly() {
    assertTrue(exact("alice").matches("alice"));
    assertFalse(exact("alice").matches("alice2"));
    assertFalse(exact("alice").matches("alic"));
    assertFalse(exact("alice").matches(""));
    assertTrue(exact("").matches(""));
    assertFalse(exact("alice").matches(null), "a missing value never matches");
    assertFalse(exact("*").matches(null));
  }

  @Test
  void star_matchesAnyRun_includingNone_anywhere() {
    assertTrue(exact("*").matches(""));
    assertTrue(exact("*").matches("anything at all"));
    assertTrue(exact("svc-*").matches("svc-"));
    assertTrue(exact("svc-*").matches("svc-etl"));
    assertFalse(exact("svc-*").matches("svc"));
    assertTrue(exact("*@example.com").matches("alice@example.com"));
    assertFalse(exact("*@example.com").matches("alice@example.com.evil"));
    assertTrue(exact("a*c").matches("abbbc"));
    assertTrue(exact("a*c").matches("ac"));
    assertFalse(exact("a*c").matches("acb"));
    assertTrue(exact("a*b*c").matches("axxbyybzc"));
    assertFalse(exact("a*b*c").matches("axxbyy"));
    assertTrue(exact("*team*").matches("data-team-eu"));
    assertTrue(exact("a**c").matches("ac"));
    assertTrue(exact("a*").matches("a*"), "a star in the value is a character like any other");
  }

  @Test
  void question_matchesExactlyOneCharacter_aWholeCodePoint() {
    assertTrue(exact("a?c").matches("abc"));
    assertFalse(exact("a?c").matches("ac"));
    assertFalse(exact("a?c").matches("abbc"));
    assertTrue(exact("?").matches("\uD83D\uDE00"), "one emoji is one character");
    assertFalse(exact("??").matches("\uD83D\uDE00"));
    assertTrue(exact("\uD83D\uDE00*").matches("\uD83D\uDE00-team"));
  }

  @Test
  void identities_areCaseSensitive() {
    assertFalse(exact("Alice").matches("alice"));
    assertFalse(exact("alice").matches("Alice"));
    assertFalse(exact("alice").matches("ALICE"));
    assertFalse(exact("a*").matches("Alice"));
    assertTrue(exact("A*").matches("Alice"));
    assertFalse(exact("Straße").matches("STRASSE"));
  }

  @Test
  void anyCase_foldsEachCharacter() {
    assertTrue(Glob.anyCase("*.Example.com").matches("spark.EXAMPLE.COM"));
    assertTrue(Glob.anyCase("*PASSWORD*").matches("spark.ssl.keyPassword"));
    assertTrue(Glob.anyCase("\uD801\uDC00*").matches("\uD801\uDC28x"), "Deseret letters have case");
    assertFalse(Glob.anyCase("a?c").matches("ac"));
  }

  /** Regex metacharacters are plain characters: a pattern cannot smuggle a regex in. */
  @Test
  void regexMetacharacters_areLiteral() {
    assertTrue(exact("a.b").matches("a.b"));
    assertFalse(exact("a.b").matches("axb"));
    assertTrue(exact("a+b").matches("a+b"));
    assertFalse(exact("a+b").matches("aab"));
    assertFalse(exact("a+b").matches("ab"));
    assertTrue(exact("(x)").matches("(x)"));
    assertFalse(exact("(x)").matches("x"));
    assertTrue(exact("\\").matches("\\"));
    assertFalse(exact("\\").matches(""));
    assertTrue(exact("a\\*").matches("a\\anything"), "a backslash escapes nothing");
    assertFalse(exact("a\\*").matches("a*"));
    assertTrue(exact("[ab]").matches("[ab]"));
    assertFalse(exact("[ab]").matches("a"));
    assertTrue(exact("^a|b$").matches("^a|b$"));
    assertFalse(exact("^a|b$").matches("b"));
    assertTrue(exact("\\Q*\\E").matches("\\Qx\\E"));
    assertFalse(exact(".*").matches("anything"));
    assertTrue(exact("a{2}").matches("a{2}"));
    assertFalse(exact("a{2}").matches("aa"));
  }

  @Test
  void literalPrefix_isTheTextBeforeTheFirstWildcard() {
    assertEquals("spark.sql.", exact("spark.sql.*").literalPrefix());
    assertEquals("a", exact("a?b*").literalPrefix());
    assertEquals("", exact("*x").literalPrefix());
    assertEquals("abs", exact("abs").literalPrefix());
    assertFalse(exact("abs").hasWildcards());
    assertTrue(exact("ab?").hasWildcards());
    for (String text : List.of("abs", "a?b*", "*x", "", "a.b")) {
      assertEquals(exact(text).hasWildcards(), Glob.hasWildcards(text), text);
    }
  }

  // Blocks.

  @Test
  void anEmptyBlock_takesEveryone() {
    for (Principal p : PRINCIPALS) {
      assertTrue(MatchBlock.ANYONE.takes(p, null), p.name());
      assertTrue(MatchBlock.identities(List.of(), List.of(), List.of()).takes(p), p.name());
    }
  }

  @Test
  void groups_takeAnyOfThePrincipalsGroups_andTenants_needATenant() {
    MatchBlock groups = MatchBlock.identities(List.of(), List.of("lake-*"), List.of());
    assertTrue(groups.takes(who("carol", "acme-eu", "etl", "lake-x")));
    assertFalse(groups.takes(who("svc-etl", "acme", "etl")));
    assertFalse(
        MatchBlock.identities(List.of(), List.of("*"), List.of()).takes(who("alice", null)));
    MatchBlock tenants = MatchBlock.identities(List.of(), List.of(), List.of("*"));
    assertTrue(tenants.takes(who("svc-etl", "acme")));
    assertFalse(tenants.takes(who("alice", null)), "no tenant to match");
    assertFalse(tenants.takes("alice", List.of(), Optional.empty()));
  }

  @Test
  void everyListThatIsSet_mustMatch() {
    MatchBlock block = MatchBlock.identities(List.of("a*"), List.of("etl"), List.of("acme"));
    assertTrue(block.takes(who("alice", "acme", "etl")));
    assertFalse(block.takes(who("bob", "acme", "etl")));
    assertFalse(block.takes(who("anna", "globex", "etl")));
    assertFalse(block.takes(who("abe", "acme", "analysts")));
    assertFalse(block.takes(who("ada", null, "etl")));
  }

  @Test
  void authority_isAHostInAnyCase_withOrWithoutItsPort() {
    MatchBlock block = block(List.of(), List.of(), List.of(), List.of("batch.spark.example.com"));
    Principal a = who("a", null);
    assertTrue(block.takes(a, "batch.spark.example.com"));
    assertTrue(block.takes(a, "batch.spark.example.com:443"));
    assertTrue(block.takes(a, "BATCH.Spark.example.com"));
    assertFalse(block.takes(a, "spark.example.com:443"));
    assertFalse(block.takes(a, null), "unknown: not taken");
    assertFalse(block.takes(a, ""), "unknown: not taken");
    assertFalse(block.takes(a));
    assertTrue(block(List.of(), List.of(), List.of(), List.of("*:8443")).takes(a, "h:8443"));
  }

  @Test
  void theAuthoritysHost_withoutItsPort() {
    assertEquals("h.example.com", MatchBlock.withoutPort("h.example.com:443"));
    assertEquals("[::1]", MatchBlock.withoutPort("[::1]:15002"));
    assertNull(MatchBlock.withoutPort("::1"));
    assertNull(MatchBlock.withoutPort("h.example.com"));
    assertNull(MatchBlock.withoutPort("h:"));
    assertNull(MatchBlock.withoutPort("h:https"));
  }

  // One block, four readers.

  private static final List<Principal> PRINCIPALS =
      List.of(
          who("alice", null),
          who("Alice", null),
          who("ALICE", null),
          who("a.b", null),
          who("axb", null),
          who("a+b", null),
          who("aab", null),
          who("(x)", null),
          who("x", null),
          who("\\", null),
          who("svc-etl", "acme", "etl"),
          who("bob", "Acme", "Etl"),
          who("carol", "acme-eu", "etl", "lake-x"));

  static Stream<Arguments> blocks() {
    return Stream.of(
        taking(List.of("alice"), List.of(), List.of(), "alice"),
        taking(List.of("Alice"), List.of(), List.of(), "Alice"),
        taking(List.of("a*"), List.of(), List.of(), "alice", "a.b", "axb", "a+b", "aab"),
        taking(List.of("a?b"), List.of(), List.of(), "a.b", "axb", "a+b", "aab"),
        taking(List.of("a.b"), List.of(), List.of(), "a.b"),
        taking(List.of("a+b"), List.of(), List.of(), "a+b"),
        taking(List.of("(x)"), List.of(), List.of(), "(x)"),
        taking(List.of("\\"), List.of(), List.of(), "\\"),
        taking(List.of("x", "ALICE"), List.of(), List.of(), "x", "ALICE"),
        taking(List.of(), List.of("etl"), List.of(), "svc-etl", "carol"),
        taking(List.of(), List.of("Etl"), List.of(), "bob"),
        taking(List.of(), List.of("*"), List.of(), "svc-etl", "bob", "carol"),
        taking(List.of(), List.of(), List.of("acme"), "svc-etl"),
        taking(List.of(), List.of(), List.of("acme*"), "svc-etl", "carol"),
        taking(List.of(), List.of(), List.of("*"), "svc-etl", "bob", "carol"),
        taking(List.of("*"), List.of("etl"), List.of("acme"), "svc-etl"),
        taking(List.of("*o*"), List.of("*"), List.of(), "bob", "carol"));
  }

  private static Arguments taking(
      List<String> principals, List<String> groups, List<String> tenants, String... taken) {
    return Arguments.of(principals, groups, tenants, new TreeSet<>(List.of(taken)));
  }

  /**
   * A route table, a quota override, a policy rule and a grant's {@code to:} from the same block take the same
   * principals.
   */
  @ParameterizedTest
  @MethodSource("blocks")
  void routesQuotasPoliciesAndGrants_takeTheSamePrincipals(
      List<String> principals, List<String> groups, List<String> tenants, Set<String> expected) {
    MatchConfig config = new MatchConfig(principals, groups, tenants, List.of());
    Set<String> byBlock = new TreeSet<>();
    List<String> disagreements = new ArrayList<>();
    for (Principal p : PRINCIPALS) {
      boolean block = MatchBlock.identities(principals, groups, tenants).takes(p);
      if (block) byBlock.add(p.name());
      boolean route = RouteProbe.takes(config, p, null);
      boolean quota = QuotaProbe.takes(config, p, null);
      boolean policy = PolicyProbe.takes(principals, groups, tenants, p);
      boolean grant = GrantProbe.takes(principals, groups, tenants, p);
      if (route != block || quota != block || policy != block || grant != block) {
        disagreements.add(
            p.name()
                + ": block "
                + block
                + ", route "
                + route
                + ", quota "
                + quota
                + ", policy "
                + policy
                + ", grant "
                + grant);
      }
    }
    assertEquals(List.of(), disagreements);
    assertEquals(expected, byBlock);
  }

  /** Routes and quota overrides (policies have none) read an authority the same way. */
  @ParameterizedTest
  @MethodSource("authorities")
  void routesAndQuotas_readTheAuthorityTheSameWay(String pattern, String dialled, boolean taken) {
    MatchConfig config = new MatchConfig(List.of(), List.of(), List.of(), List.of(pattern));
    Principal p = who("alice", null);
    assertEquals(taken, RouteProbe.takes(config, p, dialled), "route");
    assertEquals(taken, QuotaProbe.takes(config, p, dialled), "quota");
  }

  static Stream<Arguments> authorities() {
    return Stream.of(
        Arguments.of("lake.example.com", "lake.example.com", true),
        Arguments.of("lake.example.com", "lake.example.com:443", true),
        Arguments.of("lake.example.com", "LAKE.Example.com:443", true),
        Arguments.of("lake.*", "sql.example.com:443", false),
        Arguments.of("*:8443", "lake.example.com:8443", true),
        Arguments.of("[::1]", "[::1]:15002", true),
        Arguments.of("*", null, false));
  }

  private static Glob exact(String pattern) {
    return Glob.exact(pattern);
  }

  private static MatchBlock block(
      List<String> principals, List<String> groups, List<String> tenants, List<String> authority) {
    return MatchBlock.of(new MatchConfig(principals, groups, tenants, authority));
  }

  private static Principal who(String name, String tenant, String... groups) {
    return Principals.principal(name, tenant, groups);
  }
}
