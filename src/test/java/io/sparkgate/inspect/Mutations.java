package io.sparkgate.inspect;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * A deterministic mutation campaign over the lexically tricky parts of SQL, where two readers of one grammar
 * part ways: quotes and escapes, raw strings, {@code ${} and {@code $}, comments (nested, hints), unicode that
 * looks like syntax or like nothing, unusual whitespace, identifier quoting and case. Seeds are statements,
 * expressions and names a shared server must see through; each mutant is one to three edits of a seed.
 */
final class Mutations {
  static final List<String> STATEMENTS =
      List.of(
          "SELECT reflect('java.lang.System', 'getProperty', 'user.home')",
          "SELECT `java_method`('java.lang.System', 'getenv', 'HOME') FROM t",
          "SELECT * FROM text.`/etc/passwd`",
          "SELECT * FROM csv.`file:/etc/passwd` AS x WHERE a = 'b'",
          "SELECT TRANSFORM(id) USING 'cat /etc/passwd' AS (who) FROM range(1)",
          "FROM range(1) MAP id USING 'sh -c id' AS x",
          "INSERT INTO db.target SELECT * FROM src.secret WHERE k = \"v\"",
          "INSERT OVERWRITE DIRECTORY '/tmp/out' USING text SELECT 'x'",
          "INSERT OVERWRITE LOCAL DIRECTORY '/tmp/out' SELECT * FROM t",
          "CREATE TABLE t (a INT) USING text LOCATION '/etc'",
          "CREATE TEMPORARY VIEW v USING text OPTIONS (path '/etc/passwd')",
          "SET spark.sql.catalog.x = com.example.Evil",
          "SET `spark.sql.catalog.x`=com.example.Evil",
          "RESET spark.sql.catalog.x",
          "ADD JAR /tmp/evil.jar",
          "CREATE FUNCTION f AS 'com.example.Evil' USING JAR '/tmp/evil.jar'",
          "WITH w AS (SELECT * FROM secret) SELECT * FROM w JOIN other ON w.a = other.a",
          "SELECT * FROM t WHERE a IN (SELECT java_method('a', 'b') FROM u)",
          "SELECT /*+ REPARTITION(3) */ a, 'it''s' AS s, \"q\" AS d FROM t -- trailing",
          "SELECT a /* c */, b FROM t /* nested /* inner */ still */ WHERE x = r'\\n'",
          "EXECUTE IMMEDIATE 'SELECT reflect(1)'",
          "MERGE INTO target USING source ON target.id = source.id WHEN MATCHED THEN DELETE",
          "DELETE FROM db.t WHERE a = 'x'",
          "LOAD DATA LOCAL INPATH '/etc/passwd' INTO TABLE t",
          "SELECT IDENTIFIER('reflect')('a', 'b')",
          "SELECT * FROM IDENTIFIER('text.`/etc/passwd`')",
          "SELECT explode(array(1)) AS e FROM t LATERAL VIEW posexplode(array(2)) x AS p, q",
          "CACHE TABLE c AS SELECT * FROM secret",
          "SELECT x FROM parquet.`s3a://bucket/data`, json.`hdfs:///data`");

  static final List<String> EXPRESSIONS =
      List.of(
          "reflect('java.lang.System', 'getProperty', 'user.home')",
          "`java_method`('a', 'b') AS x",
          "a + upper('x''y') AS \"z\"",
          "(SELECT max(b) FROM secret.t)",
          "exists(SELECT 1 FROM text.`/etc/passwd`)",
          "transform(array(1), x -> reflect('a', x))",
          "CAST(a AS STRING) || '/* not a comment */'");

  /**
   * Keyword syntax for expressions, each read as is: Spark's AstBuilder turns some into calls by name
   * (EXTRACT, BETWEEN), which the inspector must report like written calls.
   */
  static final List<String> SYNTAX =
      List.of(
          "TRIM(BOTH 'a' FROM 'b')",
          "SUBSTRING('abc' FROM 1 FOR 2)",
          "POSITION('a' IN 'b')",
          "OVERLAY('abc' PLACING 'x' FROM 1 FOR 1)",
          "TIMESTAMPADD(HOUR, 1, now())",
          "TIMESTAMPDIFF(HOUR, a, b)",
          "DATEADD(HOUR, 1, a)",
          "DATEDIFF(DAY, a, b)",
          "PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY x)",
          "COUNT(*)",
          "a LIKE ANY ('a', 'b')",
          "a ILIKE 'x'",
          "a RLIKE 'x'",
          "a IS DISTINCT FROM b",
          "a NOT BETWEEN 1 AND 2",
          "EXTRACT(YEAR FROM a)",
          "CURRENT_DATE",
          "CURRENT_USER",
          "a || b",
          "a COLLATE UTF8_LCASE",
          "a::int",
          "TRY_CAST(a AS INT)",
          "a <=> b",
          "a DIV b",
          "a REGEXP 'x'",
          "x -> x + 1",
          "ANY_VALUE(a)",
          "FIRST(a IGNORE NULLS)",
          "INTERVAL 1 DAY",
          "a[1]",
          "a.b.c",
          "CASE WHEN a THEN b END",
          "EXISTS (SELECT 1 FROM t)",
          "count(DISTINCT a) FILTER (WHERE a > 1)",
          "sum(a) OVER (PARTITION BY b)",
          "listagg(a) WITHIN GROUP (ORDER BY a)",
          "session_user",
          "grouping(a)",
          "IDENTIFIER('reflect')('a')",
          "IDENTIFIER('a', 'b')",
          "IDENTIFIER(DISTINCT 'a')",
          "IDENTIFIER('a') OVER (ORDER BY x)",
          "`system`.`builtin`.reflect('a')",
          "builtin.java_method('a')",
          "session.f(1)",
          "cat.db.f(1)",
          "struct(a AS b)",
          "named_struct('a', reflect('x'))",
          "a IN (SELECT b FROM t)",
          "(SELECT 1) + 1",
          "transform(x, (a, i) -> a)",
          "try_reflect('a')",
          "\"reflect\"('a')",
          "`reflect`('a')",
          "reflect /* c */ ('a')",
          "ReFlEcT('a')",
          "reflect\n('a')",
          "db . f (1)");

  static final List<String> NAMES =
      List.of(
          "text.`/etc/passwd`",
          "spark_catalog.db.t",
          "`db`.`t`",
          "a.b.c.d",
          "csv.`file:/etc/passwd`");

  /** Pieces inserted or swapped in: the characters two readers of SQL most easily disagree about. */
  static final List<String> PIECES =
      List.of(
          "'",
          "\"",
          "`",
          "''",
          "\"\"",
          "``",
          "\\",
          "\\'",
          "\\\"",
          "\\\\",
          "\\u0027",
          "\\u0060",
          "\\n",
          "r'",
          "R'",
          "r\"",
          "X'",
          "${",
          "$",
          "${x}",
          "${spark:x}",
          "${env:HOME}",
          "$${x}",
          "--",
          "-- c\n",
          "/*",
          "*/",
          "/* c */",
          "/* /* */ */",
          "/*+ ",
          "/*+ hint */",
          "/*/",
          "/**/",
          "\uFF07",
          "\uFF40",
          "\uFF02",
          "\uD83D\uDE00",
          "\u200B",
          "\uFEFF",
          "\u0000",
          "\t",
          "\r",
          "\f",
          "\u000B",
          "\u00A0",
          "\u2028",
          "\u2029",
          "\n",
          "\r\n",
          " ",
          ";",
          ";;",
          ",",
          ".",
          "(",
          ")",
          "a",
          "A",
          "_",
          "0",
          "1e3",
          "e",
          "0x",
          "U&",
          "?",
          ":",
          ":x",
          "|>",
          "||",
          "->",
          "=",
          "!",
          "AS",
          "FROM",
          "SELECT",
          "reflect(1)",
          "t",
          "`x`",
          "\"x\"",
          "'x'",
          "r'x'",
          "/*'*/",
          "'/*'",
          "`/*`",
          "--'",
          "'--'",
          "\\`");

  private Mutations() {}

  /** About {@code count} distinct mutants (statements, then expressions and names), the same for a seed. */
  static List<SparkOracle.Request> campaign(long seed, int count) {
    Random random = new Random(seed);
    Set<SparkOracle.Request> out = new LinkedHashSet<>();
    for (String e : SYNTAX) {
      for (SqlParserFlags f : SparkParserDifferentialTest.VARIANTS)
        out.add(new SparkOracle.Request(SparkOracle.Mode.EXPR, f, e));
    }
    int attempts = 0;
    while (out.size() < count && attempts++ < count * 4) {
      int kind = random.nextInt(10);
      SparkOracle.Mode mode =
          kind < 7
              ? SparkOracle.Mode.PLAN
              : kind < 9 ? SparkOracle.Mode.EXPR : SparkOracle.Mode.IDENT;
      List<String> seeds =
          mode == SparkOracle.Mode.PLAN
              ? STATEMENTS
              : mode == SparkOracle.Mode.EXPR ? EXPRESSIONS : NAMES;
      String text = seeds.get(random.nextInt(seeds.size()));
      int edits = 1 + random.nextInt(3);
      for (int e = 0; e < edits; e++) text = mutate(text, random);
      SqlParserFlags flags =
          SparkParserDifferentialTest.VARIANTS.get(
              random.nextInt(SparkParserDifferentialTest.VARIANTS.size()));
      out.add(new SparkOracle.Request(mode, flags, text));
    }
    return new ArrayList<>(out);
  }

  static String mutate(String text, Random random) {
    if (text.isEmpty()) return PIECES.get(random.nextInt(PIECES.size()));
    int at = boundary(text, random);
    String piece = PIECES.get(random.nextInt(PIECES.size()));
    switch (random.nextInt(7)) {
      case 0, 1 -> {
        return text.substring(0, at) + piece + text.substring(at);
      }
      case 2 -> {
        int end = Math.min(text.length(), at + 1 + random.nextInt(3));
        return text.substring(0, at) + piece + text.substring(end);
      }
      case 3 -> {
        // Doubles or drops a quote character, or turns one quote into another.
        int q = quoteAt(text, random);
        if (q < 0) return text.substring(0, at) + piece + text.substring(at);
        String quotes = "'\"`";
        return switch (random.nextInt(3)) {
          case 0 -> text.substring(0, q + 1) + text.charAt(q) + text.substring(q + 1);
          case 1 -> text.substring(0, q) + text.substring(q + 1);
          default ->
              text.substring(0, q) + quotes.charAt(random.nextInt(3)) + text.substring(q + 1);
        };
      }
      case 4 -> {
        // Changes the case of a letter: keywords and names are case-insensitive, quoted text is
        // not.
        char c = text.charAt(at);
        char swapped =
            Character.isUpperCase(c) ? Character.toLowerCase(c) : Character.toUpperCase(c);
        return text.substring(0, at) + swapped + text.substring(at + 1);
      }
      case 5 -> {
        // Quotes the word at a position with backticks or double quotes.
        int s = at;
        while (s > 0 && Character.isLetterOrDigit(text.charAt(s - 1))) s--;
        int e = at;
        while (e < text.length() && Character.isLetterOrDigit(text.charAt(e))) e++;
        if (e <= s) return text.substring(0, at) + piece + text.substring(at);
        String q = random.nextBoolean() ? "`" : "\"";
        return text.substring(0, s) + q + text.substring(s, e) + q + text.substring(e);
      }
      default -> {
        // Swaps a space for another kind of whitespace or a comment.
        int sp = text.indexOf(' ', at);
        if (sp < 0) sp = text.lastIndexOf(' ');
        if (sp < 0) return text + piece;
        String[] ws = {
          "\t", "\n", "\r", "\f", "\u00A0", "\u2028", "\u3000", "/**/", "--\n", "\u000B"
        };
        return text.substring(0, sp) + ws[random.nextInt(ws.length)] + text.substring(sp + 1);
      }
    }
  }

  private static int boundary(String text, Random random) {
    return random.nextInt(text.length());
  }

  private static int quoteAt(String text, Random random) {
    List<Integer> quotes = new ArrayList<>();
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\'' || c == '"' || c == '`') quotes.add(i);
    }
    return quotes.isEmpty() ? -1 : quotes.get(random.nextInt(quotes.size()));
  }
}
