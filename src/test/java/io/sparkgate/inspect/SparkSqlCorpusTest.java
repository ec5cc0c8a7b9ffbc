package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every statement of Spark's own SQL tests through the inspector: it must never fail, and must either
 * classify a statement (a kind in the table, with its class) or say it could not (UNCLASSIFIED). The
 * inputs are unpacked from the spark-sql tests jar by the build (execution unpack-spark-sql-test-inputs).
 */
final class SparkSqlCorpusTest {
  static final Path INPUTS = Path.of("target/spark-sql-tests/sql-tests/inputs");

  /** What the run found, statement by statement where it matters (unparseable ones, and why). */
  static final Path REPORT = Path.of("target/spark-sql-corpus.txt");

  private static final Set<String> PARSER_KEYS =
      Set.of(
          "spark.sql.ansi.enabled",
          "spark.sql.ansi.enforceReservedKeywords",
          "spark.sql.ansi.doubleQuotedIdentifiers",
          "spark.sql.legacy.setopsPrecedence.enabled",
          "spark.sql.legacy.exponentLiteralAsDecimal.enabled");

  private final Inspector inspector = new Inspector();

  @Test
  void every_statement_is_classified_or_unclassified_never_an_error() throws IOException {
    assertTrue(
        Files.isDirectory(INPUTS),
        INPUTS + " is missing: run the test through Maven, which unpacks it");
    List<Path> files;
    try (Stream<Path> walk = Files.walk(INPUTS)) {
      files = walk.filter(p -> p.toString().endsWith(".sql")).sorted().toList();
    }
    Tally tally = new Tally();
    for (Path file : files) {
      String name = INPUTS.relativize(file).toString().replace('\\', '/');
      String text = Files.readString(file, StandardCharsets.UTF_8);
      SparkSqlTestInputs.Lines lines = SparkSqlTestInputs.lines(text);
      for (String c : lines.comments()) {
        if (c.startsWith("--CONFIG_DIM") && PARSER_KEYS.stream().anyMatch(c::contains)) {
          tally.problems.add(
              name + ": --CONFIG_DIM sets a parser flag, which this test does not follow: " + c);
        }
      }
      ParserSettings flags =
          SparkSqlTestInputs.parser(SparkSqlTestInputs.settings(lines.comments()));
      SessionView session = SparkSqlTestInputs.session(flags);
      for (String sql : SparkSqlTestInputs.statements(text, this::testCase)) {
        tally.statements++;
        // The --IMPORTs repeat whole files: each text is read once per set of flags.
        if (tally.distinct.add(flags + "\n" + sql)) tally.check(name, sql, inspector, session);
      }
    }

    Set<String> neverSeen = new TreeSet<>();
    for (StatementKinds.Kind k : StatementKinds.load().values()) {
      if (!k.isInsertForm() && !tally.kinds.containsKey(k.name())) neverSeen.add(k.name());
    }
    String summary =
        String.format(
            "Spark SQL test corpus: %d files, %d statements (%d distinct), of the distinct %d classified, %d "
                + "unparseable (UNCLASSIFIED unparseable_sql) and %d unread (variable_substitution); %d "
                + "problems%n"
                + "  other UNCLASSIFIED facts of classified statements: %s%n"
                + "  statements by kind: %s%n  kinds of the table not in the corpus: %s%n",
            files.size(),
            tally.statements,
            tally.distinct.size(),
            tally.classified,
            tally.unparseable,
            tally.unread,
            tally.problems.size(),
            tally.flagged,
            tally.kinds,
            neverSeen);
    System.out.print(summary);
    write(summary + "\n" + tally.details);

    List<String> problems = tally.problems;
    if (!problems.isEmpty()) {
      fail(
          problems.size()
              + " problems, the first ones:\n"
              + String.join("\n", problems.subList(0, Math.min(40, problems.size()))));
    }
    assertEquals(tally.distinct.size(), tally.classified + tally.unparseable + tally.unread);
    // A corpus that did not unpack, or a splitter that lost its way, must not pass quietly.
    assertTrue(files.size() >= 300 && tally.statements >= 10_000, summary);
    assertTrue(
        tally.unparseable < tally.distinct.size() / 20, "more than 5% unparseable: " + summary);
  }

  /** What the statements gave, and what was wrong with them. */
  private static final class Tally {
    int statements;
    int classified;
    int unparseable;

    /** Refused unread: variable substitution would rewrite them first. */
    int unread;

    final Set<String> distinct = new HashSet<>();
    final Map<String, Integer> kinds = new TreeMap<>();

    /** Other UNCLASSIFIED facts of statements that parsed (hidden names, dynamic SQL, ...). */
    final Map<String, Integer> flagged = new TreeMap<>();

    final List<String> problems = new ArrayList<>();
    final StringBuilder details = new StringBuilder();

    void check(String file, String sql, Inspector inspector, SessionView session) {
      Facts facts;
      try {
        facts = inspector.inspectSql(sql, session);
      } catch (RuntimeException | StackOverflowError e) {
        problems.add(file + ": " + e + "\n    " + sql);
        return;
      }
      Set<String> unclassified = new TreeSet<>();
      for (Fact f : facts.ofKind(Fact.Kind.UNCLASSIFIED)) unclassified.add(f.subkind());
      List<Fact> sqlFacts = facts.ofKind(Fact.Kind.SQL);
      if (unclassified.contains("inspector_error")
          || unclassified.contains("unknown_statement_kind")
          || sqlFacts.isEmpty()) {
        problems.add(file + ": " + facts.all() + "\n    " + sql);
        return;
      }
      Fact own = sqlFacts.get(0);
      if (own.subkind().equals("unread")) {
        // Variable substitution would rewrite it before Spark parses it: refused unread.
        if (!unclassified.contains("variable_substitution"))
          problems.add(file + ": unread, not UNCLASSIFIED variable_substitution: " + sql);
        unread++;
        return;
      }
      if (own.subkind().equals("unparseable")) {
        if (!unclassified.contains("unparseable_sql"))
          problems.add(file + ": unparseable, not UNCLASSIFIED: " + sql);
        unparseable++;
        details
            .append("unparseable ")
            .append(file)
            .append(": ")
            .append(facts.ofKind(Fact.Kind.UNCLASSIFIED).get(0).get("detail"))
            .append("\n    ")
            .append(sql.replace("\n", "\n    "))
            .append('\n');
        return;
      }
      // The statement's own fact, those of statements in it (EXPLAIN's subject, a block's
      // statements) and of EXECUTE IMMEDIATE texts.
      for (Fact f : sqlFacts) {
        if (f.subkind().equals("unparseable")) continue;
        StatementKinds.Kind kind = StatementKinds.TABLE.of(f.subkind());
        if (kind == null || !kind.kindClass().equals(f.get("class"))) {
          problems.add(
              file + ": kind " + f.subkind() + " class " + f.get("class") + "\n    " + sql);
        }
        kinds.merge(f.subkind(), 1, Integer::sum);
      }
      classified++;
      for (String u : unclassified) flagged.merge(u, 1, Integer::sum);
    }
  }

  @Test
  void identifier_clause_naming_a_column_calls_no_function() {
    // Found by the corpus (identifier-clause.sql): IDENTIFIER('c1') parsed as a call whose argument
    // is the name, which the listener took for IDENTIFIER(...)(...) and failed on.
    Inspector inspector = new Inspector();
    Facts columns =
        inspector.inspectSql(
            "SELECT IDENTIFIER('c1'), IDENTIFIER('t').c2, IDENTIFIER(v) FROM t",
            SessionView.DEFAULT);
    assertEquals(List.of(), columns.ofKind(Fact.Kind.FUNCTION_CALL));
    assertEquals(List.of(), columns.ofKind(Fact.Kind.UNCLASSIFIED));
    Facts call =
        inspector.inspectSql(
            "SELECT IDENTIFIER('max')(IDENTIFIER('c1')) FROM t", SessionView.DEFAULT);
    assertEquals(
        List.of("max"),
        call.ofKind(Fact.Kind.FUNCTION_CALL).stream().map(f -> f.get("name")).toList());
  }

  /** A test case's text by its name under inputs/, as --IMPORT names it. */
  private String testCase(String name) {
    Path p = INPUTS.resolve(name);
    if (!Files.isRegularFile(p)) return null;
    try {
      return Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void write(String report) {
    try {
      Files.writeString(REPORT, report, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
