package io.sparkgate.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionView;
import io.sparkgate.testing.TestFacts;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;

/**
 * Any text as SQL (the corpus: statements a shared server must refuse, which the fuzzer mutates). SQL
 * inspection never throws, never comes back empty, and its spans stay inside the text they point into.
 */
final class SqlInspectionFuzzTest {
  private static final Inspector INSPECTOR = new Inspector();
  private static final SessionView[] SESSIONS = {
    SessionView.DEFAULT, SessionView.of("cat", "db", Set.of("cat"))
  };

  @FuzzTest
  void inspectSql_anyText_neverThrowsAndNeverEmpty(byte[] input) {
    String sql = new String(input, StandardCharsets.UTF_8);
    for (SessionView session : SESSIONS) {
      Facts facts = INSPECTOR.inspectSql(sql, session);
      assertTrue(
          facts.has(Fact.Kind.SQL) || facts.has(Fact.Kind.UNCLASSIFIED),
          () -> "neither SQL nor UNCLASSIFIED:\n" + facts);
      assertTrue(
          !TestFacts.has(facts, Fact.Kind.UNCLASSIFIED, "inspector_error"),
          () -> "the inspector threw:\n" + facts);
      for (Fact f : facts.all())
        assertSpansInside(f, f.get("sql") != null ? f.get("sql").length() : sql.length());
    }
  }

  /** Spans ({@code x_start}/{@code x_end}) are what rewriters cut the text at: never outside it, never reversed. */
  private static void assertSpansInside(Fact f, int length) {
    for (Map.Entry<String, String> a : f.attrs().entrySet()) {
      if (!a.getKey().endsWith("_start")) continue;
      String name = a.getKey().substring(0, a.getKey().length() - "_start".length());
      int start = f.intAttr(a.getKey());
      int end = f.intAttr(name + "_end");
      assertTrue(
          0 <= start && start <= end && end <= length,
          () -> "span " + name + " outside 0.." + length + ": " + f);
    }
  }
}
