package io.sparkgate.inspect;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;

/**
 * The strings of the standing bypass suites: the {@code sql:} of every case in policies/shared-server_test.yaml
 * and policies/team-data_test.yaml (the grants'),
 * and the SQL and expression strings BypassIT sends, read from its source: the arguments of {@code sql(...)},
 * {@code .sql(...)} and {@code selectExpr(...)}, string literals and constants concatenated, anything computed
 * (a marker file, a temporary path) replaced by a path of the same shape.
 */
final class BypassSuite {
  static final List<Path> POLICY_CASES =
      List.of(Path.of("policies/shared-server_test.yaml"), Path.of("policies/team-data_test.yaml"));
  static final Path BYPASS_IT = Path.of("src/test/java/io/sparkgate/e2e/BypassIT.java");

  /** What a computed part of a string stands for: BypassIT's are paths and shell commands on paths. */
  static final String COMPUTED = "/tmp/sparkgate-bypass/marker";

  record Entry(SparkOracle.Mode mode, String text) {}

  private BypassSuite() {}

  static List<String> policyCases() {
    List<String> out = new ArrayList<>();
    for (Path file : POLICY_CASES) {
      Map<?, ?> doc = new Yaml().loadAs(read(file), Map.class);
      for (Object c : (List<?>) doc.get("cases")) {
        if (c instanceof Map<?, ?> m && m.get("sql") instanceof String sql) out.add(sql);
      }
    }
    return out;
  }

  private static final Pattern CALL = Pattern.compile("(?:\\bsql|\\.sql|selectExpr)\\(");
  private static final Pattern CONSTANT =
      Pattern.compile("static final String (\\w+) =\\s*(\"(?:[^\"\\\\]|\\\\.)*\");");

  static List<Entry> bypassIt() {
    String src = read(BYPASS_IT);
    Map<String, String> constants = new HashMap<>();
    Matcher c = CONSTANT.matcher(src);
    while (c.find()) constants.put(c.group(1), javaString(c.group(2)));
    Set<Entry> out = new LinkedHashSet<>();
    Matcher m = CALL.matcher(src);
    while (m.find()) {
      List<String> args = arguments(src, m.end());
      SparkOracle.Mode mode =
          m.group().startsWith("selectExpr") ? SparkOracle.Mode.EXPR : SparkOracle.Mode.PLAN;
      for (String arg : args) {
        String value = concatenation(arg, constants);
        if (value != null) {
          out.add(new Entry(mode, value));
          break;
        }
      }
    }
    return new ArrayList<>(out);
  }

  /** The top-level arguments of the call whose '(' is just before {@code from}. */
  private static List<String> arguments(String src, int from) {
    List<String> args = new ArrayList<>();
    int depth = 0;
    int start = from;
    for (int i = from; i < src.length(); i++) {
      char ch = src.charAt(i);
      if (ch == '"') {
        i = endOfLiteral(src, i);
      } else if (ch == '(' || ch == '{' || ch == '[') {
        depth++;
      } else if (ch == ')' || ch == '}' || ch == ']') {
        if (depth-- == 0) {
          args.add(src.substring(start, i).strip());
          return args;
        }
      } else if (ch == ',' && depth == 0) {
        args.add(src.substring(start, i).strip());
        start = i + 1;
      }
    }
    return args;
  }

  private static int endOfLiteral(String src, int open) {
    for (int i = open + 1; i < src.length(); i++) {
      if (src.charAt(i) == '\\') i++;
      else if (src.charAt(i) == '"') return i;
    }
    return src.length();
  }

  /** A concatenation that holds at least one string literal, evaluated; else null. */
  private static String concatenation(String expr, Map<String, String> constants) {
    List<String> terms = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < expr.length(); i++) {
      char ch = expr.charAt(i);
      if (ch == '"') i = endOfLiteral(expr, i);
      else if (ch == '(') depth++;
      else if (ch == ')') depth--;
      else if (ch == '+' && depth == 0) {
        terms.add(expr.substring(start, i).strip());
        start = i + 1;
      }
    }
    terms.add(expr.substring(start).strip());
    StringBuilder b = new StringBuilder();
    boolean literal = false;
    for (String t : terms) {
      if (t.startsWith("\"") && t.endsWith("\"") && t.length() >= 2) {
        b.append(javaString(t));
        literal = true;
      } else if (constants.containsKey(t)) {
        b.append(constants.get(t));
      } else {
        b.append(COMPUTED);
      }
    }
    return literal ? b.toString() : null;
  }

  /** A Java string literal's value (the escapes BypassIT uses). */
  static String javaString(String literal) {
    String body = literal.substring(1, literal.length() - 1);
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < body.length(); i++) {
      char ch = body.charAt(i);
      if (ch != '\\' || i + 1 == body.length()) {
        b.append(ch);
        continue;
      }
      char n = body.charAt(++i);
      switch (n) {
        case 'n' -> b.append('\n');
        case 't' -> b.append('\t');
        case 'r' -> b.append('\r');
        case 'u' -> {
          b.append((char) Integer.parseInt(body.substring(i + 1, i + 5), 16));
          i += 4;
        }
        default -> b.append(n);
      }
    }
    return b.toString();
  }

  private static String read(Path p) {
    try {
      return Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
