package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.antlr.v4.runtime.tree.IterativeParseTreeWalker;
import org.apache.spark.sql.catalyst.parser.SqlBaseParser;
import org.apache.spark.sql.catalyst.parser.SqlBaseParserBaseListener;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * No parser differential between Sparkgate and Spark (issue 56): every string of three corpora is read by
 * Spark 4.0's own session parser in a child JVM ({@link SparkOracle}) and by Sparkgate's inspector, and
 * whatever Spark finds in it (functions, tables read and written, paths, script transforms, data sources,
 * settings) must be in Sparkgate's facts, unless Sparkgate refuses the string. The corpora: Spark's own SQL
 * tests (statements and their SELECT-list items as expression strings), the standing bypass suite
 * (shared-server_test.yaml and BypassIT), and a fixed-seed mutation campaign over the lexically tricky parts
 * of SQL. The figures go to target/spark-parser-differential.txt.
 */
final class SparkParserDifferentialTest {
  static final Path REPORT = Path.of("target/spark-parser-differential.txt");

  /** Spark 4.0's defaults, and each ANSI parser switch on (with ANSI mode, 4.0's default). */
  static final List<SqlParserFlags> VARIANTS =
      List.of(
          SqlParserFlags.SPARK_4_0_DEFAULTS,
          new SqlParserFlags(false, false, true, false),
          new SqlParserFlags(false, false, false, true));

  /** Expression strings taken from the corpus's SELECT lists and WHERE clauses, at most. */
  static final int MAX_CORPUS_EXPRESSIONS = 10_000;

  private static SparkOracle oracle;
  private static final StringBuilder report = new StringBuilder();
  private final ParserDifferential differential = new ParserDifferential();

  @BeforeAll
  static void start() {
    long t0 = System.nanoTime();
    oracle = SparkOracle.get();
    report.append(String.format("oracle started in %.1f s%n", (System.nanoTime() - t0) / 1e9));
  }

  @AfterAll
  static void writeReport() throws IOException {
    SparkOracle.stop();
    Files.writeString(REPORT, report.toString(), StandardCharsets.UTF_8);
  }

  @Test
  void spark_sql_tests_statements_and_expressions() throws IOException {
    Path inputs = SparkSqlCorpusTest.INPUTS;
    assertTrue(Files.isDirectory(inputs), inputs + " is missing: run the test through Maven");
    List<Path> files;
    try (Stream<Path> walk = Files.walk(inputs)) {
      files = walk.filter(p -> p.toString().endsWith(".sql")).sorted().toList();
    }
    Set<SparkOracle.Request> statements = new LinkedHashSet<>();
    Set<SparkOracle.Request> expressions = new LinkedHashSet<>();
    for (Path file : files) {
      String text = Files.readString(file, StandardCharsets.UTF_8);
      SparkSqlTestInputs.Lines lines = SparkSqlTestInputs.lines(text);
      SqlParserFlags flags =
          SparkSqlTestInputs.flags(SparkSqlTestInputs.settings(lines.comments()));
      for (String sql : SparkSqlTestInputs.statements(text, name -> imported(inputs, name))) {
        statements.add(new SparkOracle.Request(SparkOracle.Mode.PLAN, flags, sql));
        if (expressions.size() < MAX_CORPUS_EXPRESSIONS) {
          for (String e : selectItems(sql, flags))
            expressions.add(new SparkOracle.Request(SparkOracle.Mode.EXPR, flags, e));
        }
      }
    }
    Tally st = run("spark sql-tests statements", new ArrayList<>(statements));
    Tally ex =
        run(
            "spark sql-tests SELECT items and WHERE conditions as expressions",
            new ArrayList<>(expressions));
    assertTrue(statements.size() > 10_000, "corpus too small: " + statements.size());
    st.assertNoBypass();
    ex.assertNoBypass();
  }

  @Test
  void standing_bypass_suite() throws IOException {
    List<SparkOracle.Request> requests = new ArrayList<>();
    for (String sql : BypassSuite.policyCases()) {
      for (SqlParserFlags f : VARIANTS)
        requests.add(new SparkOracle.Request(SparkOracle.Mode.PLAN, f, sql));
    }
    for (BypassSuite.Entry e : BypassSuite.bypassIt()) {
      for (SqlParserFlags f : VARIANTS)
        requests.add(new SparkOracle.Request(e.mode(), f, e.text()));
    }
    assertTrue(requests.size() > 300, "bypass suite too small: " + requests.size());
    run(
            "standing bypass suites (shared-server_test.yaml, team-data_test.yaml, BypassIT) x 3 parser"
                + " settings",
            requests)
        .assertNoBypass();
  }

  @Test
  void mutation_campaign() {
    // A longer or different campaign: -Dsparkgate.differential.seed=N
    // -Dsparkgate.differential.mutants=M.
    long seed = Long.getLong("sparkgate.differential.seed", 56);
    int count = Integer.getInteger("sparkgate.differential.mutants", 8000);
    List<SparkOracle.Request> requests = Mutations.campaign(seed, count);
    run("mutation campaign (seed " + seed + ")", requests).assertNoBypass();
  }

  @Test
  void the_comparison_sees_what_spark_sees_and_the_facts_lack() {
    // A guard on the harness itself: Spark's reading of one statement held against the facts of
    // another
    // must name every category Spark found, so a walk or a comparison that finds nothing cannot
    // pass quietly.
    String sql =
        "INSERT INTO db.out SELECT TRANSFORM(reflect('a')) USING 'cat' AS (y) FROM text.`/etc/passwd`";
    SparkOracle.Request request =
        new SparkOracle.Request(SparkOracle.Mode.PLAN, SqlParserFlags.SPARK_4_0_DEFAULTS, sql);
    JsonNode spark = oracle.ask(request);
    Facts nothing = new Inspector().inspectSql("SELECT 1", SessionView.DEFAULT);
    List<String> problems = ParserDifferential.missing(request, spark, nothing);
    for (String expected :
        List.of(
            "function reflect",
            "relation [text, /etc/passwd]",
            "write [db, out]",
            "script transform cat")) {
      assertTrue(problems.contains(expected), expected + " not in " + problems + " for " + spark);
    }
    assertTrue(
        ParserDifferential.missing(
                request, spark, new Inspector().inspectSql(sql, SessionView.DEFAULT))
            .isEmpty());
  }

  private Tally run(String corpus, List<SparkOracle.Request> requests) {
    long t0 = System.nanoTime();
    List<SparkOracle.Request> wire = new ArrayList<>(requests.size());
    for (SparkOracle.Request r : requests)
      wire.add(new SparkOracle.Request(r.mode(), r.flags(), ParserDifferential.wire(r.text())));
    List<JsonNode> answers = oracle.ask(wire);
    Tally tally = new Tally(corpus);
    for (int i = 0; i < wire.size(); i++) {
      tally.add(wire.get(i), differential.compare(wire.get(i), answers.get(i)));
    }
    tally.seconds = (System.nanoTime() - t0) / 1e9;
    String summary = tally.summary();
    System.out.print(summary);
    synchronized (report) {
      report.append(summary).append(tally.details);
    }
    return tally;
  }

  /** Figures per outcome, and the strings behind the interesting ones. */
  private static final class Tally {
    final String corpus;
    final Map<ParserDifferential.Outcome, Integer> outcomes =
        new EnumMap<>(ParserDifferential.Outcome.class);
    final Map<String, Integer> overRefusals = new TreeMap<>();

    /** Strings Spark parses that the inspector refuses with another UNCLASSIFIED fact, by its subkinds. */
    final Map<String, Integer> refused = new TreeMap<>();

    final List<String> bypasses = new ArrayList<>();
    final StringBuilder details = new StringBuilder();
    double seconds;

    Tally(String corpus) {
      this.corpus = corpus;
    }

    void add(SparkOracle.Request r, ParserDifferential.Result result) {
      outcomes.merge(result.outcome(), 1, Integer::sum);
      switch (result.outcome()) {
        case DISAGREE -> {
          String s =
              r.mode() + " " + r.flags() + "\n    " + r.text() + "\n    " + result.problems();
          bypasses.add(s);
          details.append("DISAGREE ").append(s).append('\n');
        }
        case UNCLASSIFIED -> refused.merge(result.detail(), 1, Integer::sum);
        case OVER_REFUSAL -> {
          overRefusals.merge(shorten(result.detail()), 1, Integer::sum);
          details
              .append("OVER_REFUSAL ")
              .append(r.mode())
              .append(' ')
              .append(result.detail())
              .append("\n    ")
              .append(r.text().replace("\n", "\n    "))
              .append('\n');
        }
        default -> {}
      }
    }

    private static String shorten(String detail) {
      return detail.replaceAll("line \\d+:\\d+ ", "").replaceAll("'[^']*'", "'…'");
    }

    String summary() {
      int total = outcomes.values().stream().mapToInt(Integer::intValue).sum();
      return String.format(
          "%s: %d strings in %.1f s: %s%n  UNCLASSIFIED by subkind: %s%n",
          corpus, total, seconds, outcomes, refused);
    }

    void assertNoBypass() {
      if (!bypasses.isEmpty()) {
        fail(
            corpus
                + ": "
                + bypasses.size()
                + " strings where Spark sees more than Sparkgate, the first:\n"
                + String.join("\n", bypasses.subList(0, Math.min(30, bypasses.size()))));
      }
    }
  }

  private static String imported(Path inputs, String name) {
    Path p = inputs.resolve(name);
    try {
      return Files.isRegularFile(p) ? Files.readString(p, StandardCharsets.UTF_8) : null;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * The items of a statement's SELECT lists and its WHERE conditions, as written: expression strings a
   * client could send (selectExpr, filter).
   */
  static List<String> selectItems(String sql, SqlParserFlags flags) {
    List<String> out = new ArrayList<>();
    SqlBaseParser.CompoundOrSingleStatementContext tree;
    try {
      tree = new SqlParsing(flags, 64).parse(sql, SqlParsing.STATEMENT);
    } catch (SqlParsing.SqlSyntaxException e) {
      return out;
    }
    SqlText text = new SqlText(sql);
    new IterativeParseTreeWalker()
        .walk(
            new SqlBaseParserBaseListener() {
              @Override
              public void enterNamedExpression(SqlBaseParser.NamedExpressionContext ctx) {
                if (ctx.getParent() instanceof SqlBaseParser.NamedExpressionSeqContext)
                  out.add(text.text(ctx));
              }

              // filter("...") and where("...") send a condition as an expression string.
              @Override
              public void enterWhereClause(SqlBaseParser.WhereClauseContext ctx) {
                out.add(text.text(ctx.booleanExpression()));
              }
            },
            tree);
    return out;
  }
}
