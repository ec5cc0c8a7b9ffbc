package io.sparkgate.inspect;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Spark's SQL test input files (sql-tests/inputs/**.sql in the spark-sql tests jar) split into statements the
 * way Spark's SQLQueryTestHelper (getQueries, splitCommentsAndCodes, getSparkSettings) does, so that the
 * corpus is the statements Spark itself runs: lines starting with {@code --} are comments (and carry the
 * directives {@code --SET}, {@code --IMPORT}, {@code --CONFIG_DIM}); the rest is split at every {@code ;}
 * not after a backslash, wherever it is on a line; {@code --QUERY-DELIMITER-START/END} bracket statements
 * that hold semicolons.
 */
final class SparkSqlTestInputs {
  private SparkSqlTestInputs() {}

  /** A file's lines, as comments (directives included) and code. */
  record Lines(List<String> comments, List<String> code) {}

  static Lines lines(String input) {
    List<String> comments = new ArrayList<>();
    List<String> code = new ArrayList<>();
    for (String line : input.split("\n")) {
      String t = line.trim();
      (t.startsWith("--") && !t.startsWith("--QUERY-DELIMITER") ? comments : code).add(line);
    }
    return new Lines(comments, code);
  }

  /**
   * The statements of a file, those of the files its {@code --IMPORT name} lines name first; {@code imports}
   * gives the text of a test case by name (its path under inputs/), or null if there is none.
   */
  static List<String> statements(String input, Function<String, String> imports) {
    Lines lines = lines(input);
    List<String> all = new ArrayList<>();
    for (String c : lines.comments()) {
      if (!c.startsWith("--IMPORT ")) continue;
      String name = c.substring("--IMPORT ".length());
      String imported = imports.apply(name);
      if (imported == null)
        throw new IllegalArgumentException("no test case " + name + " to import");
      all.addAll(lines(imported).code());
    }
    all.addAll(lines.code());

    List<String> raw = new ArrayList<>();
    if (all.stream().anyMatch(l -> l.trim().startsWith("--QUERY-DELIMITER"))) {
      List<String> other = new ArrayList<>();
      StringBuilder block = new StringBuilder();
      boolean inBlock = false;
      for (String c : all) {
        if (c.trim().startsWith("--QUERY-DELIMITER-START")) {
          inBlock = true;
          raw.addAll(splitWithSemicolon(other));
          other.clear();
        } else if (c.trim().startsWith("--QUERY-DELIMITER-END")) {
          inBlock = false;
          String b = block.toString();
          raw.add("\n" + (b.endsWith(";") ? b.substring(0, b.length() - 1) : b));
          block.setLength(0);
        } else if (inBlock) {
          block.append('\n').append(c);
        } else {
          other.add(c);
        }
      }
      if (!other.isEmpty()) raw.addAll(splitWithSemicolon(other));
    } else {
      raw.addAll(splitWithSemicolon(all));
    }

    List<String> out = new ArrayList<>();
    for (String q : raw) {
      if (q.trim().isEmpty()) continue;
      // As Spark does: a comment line left at the end of a statement (after its ;) is dropped.
      List<String> kept = new ArrayList<>();
      for (String line : q.trim().split("\n")) {
        if (!line.startsWith("--")) kept.add(line);
      }
      String s = String.join("\n", kept).trim();
      if (!s.isEmpty()) out.add(s);
    }
    return out;
  }

  private static List<String> splitWithSemicolon(List<String> lines) {
    return Arrays.asList(String.join("\n", lines).split("(?<=[^\\\\]);"));
  }

  /** The {@code --SET k=v[,k=v...]} settings of a file's comment lines. */
  static Map<String, String> settings(List<String> comments) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String c : comments) {
      if (!c.startsWith("--SET ")) continue;
      for (String kv : c.substring("--SET ".length()).split(",")) {
        int eq = kv.indexOf('=');
        if (eq >= 0) out.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
      }
    }
    return out;
  }

  /**
   * The parser flags those settings give (Spark 4.0: ANSI mode on unless set off; reserved keywords and
   * double-quoted identifiers only apply with it on). {@code --CONFIG_DIM} lines set no parser flag in the
   * 4.0 corpus, and {@code SET} statements inside a file are not followed, as the inspector reads each
   * statement on its own.
   */
  static SqlParserFlags flags(Map<String, String> settings) {
    return parser(settings).flags();
  }

  /** All the parser settings those settings give, on a Spark 4.0 backend. */
  static ParserSettings parser(Map<String, String> settings) {
    return ParserSettings.of("4.0.0", settings);
  }

  /** A fresh session on a Spark 4.0 backend with those parser settings. */
  static SessionView session(ParserSettings parser) {
    return new BackendProfile("4.0.0", List.of(), Map.of(), null, null, parser).freshSession();
  }
}
