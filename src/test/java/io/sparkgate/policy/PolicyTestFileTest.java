package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mistakes in a policy test file ({@code <name>_test.yaml}) name the file, the line, the case and the key. */
final class PolicyTestFileTest {
  @TempDir Path dir;
  private final StringWriter out = new StringWriter();

  private Path testFile(String yaml) throws IOException {
    Files.writeString(dir.resolve("p.yaml"), "default: allow\nrules: []\n");
    return Files.writeString(dir.resolve("p_test.yaml"), yaml);
  }

  private PolicyTests.Summary run(Path file) {
    return new PolicyTests(new PolicyCompiler(Effect.DENY, Set.of()))
        .runFile(file, new PrintWriter(out));
  }

  @Test
  void duplicateKey_refusesTheWholeFile_namingFileAndBothLines() throws IOException {
    Path file =
        testFile(
            "cases:\n  - name: twice\n    sql: SELECT 1\n    expect: allow\n    expect: deny\n");
    PolicyException e = assertThrows(PolicyException.class, () -> run(file));
    assertEquals(file + ":5: cases[0].expect: duplicate key (first at line 4)", e.getMessage());

    Path top = testFile("cases: []\npolicy: p.yaml\ncases:\n  - {name: a, expect: allow}\n");
    assertEquals(
        top + ":3: cases: duplicate key (first at line 1)",
        assertThrows(PolicyException.class, () -> run(top)).getMessage());
  }

  @Test
  void aBadCase_failsAlone_namingItsLineCaseAndKey() throws IOException {
    Path file =
        testFile(
            """
        cases:
          - name: typo
            sqll: SELECT 1
            expect: allow
          - name: wrong-type
            sql: SELECT 1
            groups: {admins: true}
            expect: allow
          - name: fine
            sql: SELECT 1
            expect: allow
        """);
    PolicyTests.Summary s = run(file);
    assertEquals(new PolicyTests.Summary(1, 2), s);
    String text = out.toString();
    assertTrue(
        text.contains(
            "FAIL p_test.yaml:2 typo: invalid case: "
                + file
                + ":3: case 'typo': sqll: unknown key (valid keys here: "),
        text);
    assertTrue(
        text.contains(
            "FAIL p_test.yaml:5 wrong-type: invalid case: "
                + file
                + ":7: case 'wrong-type': groups: must be a list, got a mapping"),
        text);
    assertTrue(text.contains("PASS p_test.yaml:9 fine"), text);
  }

  @Test
  void aFactOfAnUnknownKind_namesItsKey() throws IOException {
    Path file =
        testFile("cases:\n  - name: f\n    facts:\n      - {kind: NOPE}\n    expect: allow\n");
    run(file);
    assertTrue(
        out.toString().contains(file + ":4: case 'f': facts[0].kind: must be one of ["),
        out.toString());
  }
}
