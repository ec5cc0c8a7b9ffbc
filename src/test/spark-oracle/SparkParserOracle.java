import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.plans.logical.AlterTableCommand;
import org.apache.spark.sql.execution.SparkSqlParser;
import org.apache.spark.sql.internal.SQLConf;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark itself as the parser oracle of SparkParserDifferentialTest (docs/testing.md): run as a single-file
 * program on the spark-server classpath ({@code java -cp <spark> SparkParserOracle.java}), never compiled into
 * Sparkgate. One request per stdin line, {@code mode TAB flags TAB base64(text)}; one JSON object per stdout
 * line with what Spark's session parser (SparkSqlParser: variable substitution, then the grammar and
 * AstBuilder) made of it, found by walking the tree it returns. Modes: plan, expr, ident, type, schema.
 * Flags: four 0/1 digits, SqlParserFlags' order (setops, exponent, reserved keywords, double-quoted ids).
 */
public final class SparkParserOracle {
  private static final Set<String> WRITE_ROOTS =
      Set.of(
          "InsertIntoStatement",
          "CreateTable",
          "CreateTableAsSelect",
          "ReplaceTable",
          "ReplaceTableAsSelect",
          "CreateView",
          "DeleteFromTable",
          "UpdateTable",
          "MergeIntoTable",
          "DropTable",
          "TruncateTable",
          "TruncatePartition",
          "LoadData",
          "RenameTable",
          "RepairTable",
          "RecoverPartitions");

  private static final Set<String> NAME_NODES =
      Set.of(
          "UnresolvedTable",
          "UnresolvedTableOrView",
          "UnresolvedView",
          "UnresolvedIdentifier",
          "UnresolvedRelation");

  private final Map<String, SQLConf> confs = new HashMap<>();
  private final SparkSqlParser parser = new SparkSqlParser();

  public static void main(String[] args) throws Exception {
    SparkParserOracle oracle = new SparkParserOracle();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    // Spark's own logging goes to stderr; stdout carries only answers.
    System.setOut(new PrintStream(System.err, true, StandardCharsets.UTF_8));
    out.println("{\"ready\":true}");
    out.flush();
    for (String line; (line = in.readLine()) != null; ) {
      String[] f = line.split("\t", -1);
      String text = new String(Base64.getDecoder().decode(f[2]), StandardCharsets.UTF_8);
      out.println(oracle.answer(f[0], f[1], text));
      out.flush();
    }
  }

  private SQLConf conf(String flags) {
    return confs.computeIfAbsent(
        flags,
        k -> {
          SQLConf c = new SQLConf();
          c.setConfString("spark.sql.legacy.setopsPrecedence.enabled", bit(k, 0));
          c.setConfString("spark.sql.legacy.exponentLiteralAsDecimal.enabled", bit(k, 1));
          // Both ANSI parser switches only apply with ANSI mode on (Spark 4.0's default).
          c.setConfString("spark.sql.ansi.enabled", "true");
          c.setConfString("spark.sql.ansi.enforceReservedKeywords", bit(k, 2));
          c.setConfString("spark.sql.ansi.doubleQuotedIdentifiers", bit(k, 3));
          return c;
        });
  }

  private static String bit(String flags, int i) {
    return flags.charAt(i) == '1' ? "true" : "false";
  }

  String answer(String mode, String flags, String text) {
    Found found = new Found();
    try {
      Object tree =
          SQLConf.withExistingConf(conf(flags), () -> parse(parser, mode, text));
      found.root = tree == null ? "" : tree.getClass().getSimpleName();
      found.command = tree instanceof org.apache.spark.sql.catalyst.plans.logical.Command;
      if (mode.equals("ident")) {
        found.ident = new ArrayList<>();
        for (Object o : CollectionConverters.asJava((scala.collection.Seq<?>) tree))
          found.ident.add(String.valueOf(o));
      } else {
        walk(tree, found, flags, 0);
      }
      return found.json(true, null);
    } catch (Throwable e) {
      return found.json(false, e.getClass().getSimpleName() + ": " + firstLine(e.getMessage()));
    }
  }

  /** Scala declares ParseException as thrown; a Function0 cannot throw it, so it travels unchecked. */
  private static Object parse(ParserInterface p, String mode, String text) {
    try {
      return parseChecked(p, mode, text);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e.getClass().getSimpleName() + ": " + e.getMessage(), e);
    }
  }

  private static Object parseChecked(ParserInterface p, String mode, String text)
      throws Exception {
    return switch (mode) {
      case "plan" -> p.parsePlan(text);
      case "expr" -> p.parseExpression(text);
      case "ident" -> p.parseMultipartIdentifier(text);
      case "type" -> p.parseDataType(text);
      case "schema" -> p.parseTableSchema(text);
      default -> throw new IllegalArgumentException("mode " + mode);
    };
  }

  /** What a tree holds; sets keep the first-seen order. */
  static final class Found {
    String root = "";
    final Set<List<String>> functions = new LinkedHashSet<>();
    final Set<List<String>> relations = new LinkedHashSet<>();
    final Set<List<String>> writes = new LinkedHashSet<>();
    final Set<List<String>> names = new LinkedHashSet<>();
    final Set<String> ctes = new LinkedHashSet<>();
    final Set<String> scripts = new LinkedHashSet<>();
    final Set<String> paths = new LinkedHashSet<>();
    final Set<String> providers = new LinkedHashSet<>();
    final Set<String> classes = new LinkedHashSet<>();
    final Set<List<String>> configs = new LinkedHashSet<>();
    final Set<String> nodes = new LinkedHashSet<>();
    List<String> ident;
    int immediateErrors;
    boolean command;

    String json(boolean ok, String error) {
      StringBuilder b = new StringBuilder("{\"ok\":").append(ok);
      b.append(",\"immediate_errors\":").append(immediateErrors);
      b.append(",\"command\":").append(command);
      if (error != null) b.append(",\"error\":").append(str(error));
      b.append(",\"root\":").append(str(root));
      lists(b, "functions", functions);
      lists(b, "relations", relations);
      lists(b, "writes", writes);
      lists(b, "names", names);
      lists(b, "configs", configs);
      strings(b, "ctes", ctes);
      strings(b, "scripts", scripts);
      strings(b, "paths", paths);
      strings(b, "providers", providers);
      strings(b, "classes", classes);
      strings(b, "nodes", nodes);
      if (ident != null) {
        b.append(",\"ident\":");
        strings(b, ident);
      }
      return b.append('}').toString();
    }

    private static void lists(StringBuilder b, String key, Set<List<String>> v) {
      b.append(",\"").append(key).append("\":[");
      int i = 0;
      for (List<String> l : v) {
        if (i++ > 0) b.append(',');
        strings(b, l);
      }
      b.append(']');
    }

    private static void strings(StringBuilder b, String key, Set<String> v) {
      b.append(",\"").append(key).append("\":");
      strings(b, v);
    }

    private static void strings(StringBuilder b, Iterable<String> v) {
      b.append('[');
      int i = 0;
      for (String s : v) {
        if (i++ > 0) b.append(',');
        b.append(str(s));
      }
      b.append(']');
    }
  }

  /**
   * Every node reachable from the tree: children, expressions, subquery plans and any other field, through
   * Options, Seqs, Maps and tuples (a generic walk, so a plan that keeps a query in a field is read too).
   */
  private void walk(Object top, Found found, String flags, int immediateDepth) {
    Map<Object, Boolean> seen = new IdentityHashMap<>();
    ArrayDeque<Object[]> stack = new ArrayDeque<>();
    stack.push(new Object[] {top, "", null});
    while (!stack.isEmpty()) {
      Object[] item = stack.pop();
      Object o = item[0];
      String field = (String) item[1];
      Object owner = item[2];
      if (o == null || seen.put(o, Boolean.TRUE) != null) continue;
      if (o instanceof String s) {
        stringField(found, owner, field, s);
        continue;
      }
      if (o instanceof URI u) {
        if (isPathField(field)) found.paths.add(u.toString());
        continue;
      }
      if (o instanceof scala.collection.Map<?, ?> m) {
        for (var e : CollectionConverters.asJava(m).entrySet()) {
          if (e.getKey() instanceof String k && isPathKey(k) && e.getValue() != null)
            found.paths.add(String.valueOf(e.getValue()));
          stack.push(new Object[] {e.getValue(), field, owner});
        }
        continue;
      }
      if (o instanceof scala.collection.Iterable<?> it) {
        for (Object e : CollectionConverters.asJava(it)) stack.push(new Object[] {e, field, owner});
        continue;
      }
      if (o instanceof java.util.Map<?, ?> m) {
        for (var e : m.entrySet()) {
          if (e.getKey() instanceof String k && isPathKey(k) && e.getValue() != null)
            found.paths.add(String.valueOf(e.getValue()));
        }
        continue;
      }
      if (!(o instanceof scala.Product p)) continue;
      String cls = o.getClass().getSimpleName();
      if (o instanceof scala.Tuple2<?, ?> t
          && t._1() instanceof String k
          && isPathKey(k)
          && t._2() != null) {
        found.paths.add(literal(t._2()));
      }
      if (o instanceof scala.Option<?>) {
        // Some(x): x belongs to the field that holds the option.
        for (int i = 0; i < p.productArity(); i++)
          stack.push(new Object[] {p.productElement(i), field, owner});
        continue;
      }
      node(found, cls, p, flags, immediateDepth);
      for (int i = p.productArity() - 1; i >= 0; i--) {
        Object child = p.productElement(i);
        String name;
        try {
          name = p.productElementName(i);
        } catch (RuntimeException e) {
          name = "";
        }
        stack.push(new Object[] {child, name, o});
      }
    }
  }

  private void node(Found found, String cls, scala.Product p, String flags, int immediateDepth) {
    if (cls.startsWith("Unresolved")
        || cls.endsWith("Command")
        || cls.startsWith("Create")
        || cls.startsWith("Insert")) found.nodes.add(cls);
    switch (cls) {
      case "UnresolvedFunction", "UnresolvedTableValuedFunction", "UnresolvedProcedure" ->
          found.functions.add(lower(seqField(p, 0)));
      case "UnresolvedGenerator" -> found.functions.add(lower(functionIdentifier(p.productElement(0))));
      case "UnresolvedFunctionName" -> found.names.add(seqField(p, 0));
      case "UnresolvedRelation" -> found.relations.add(seqField(p, 0));
      case "UnresolvedTable", "UnresolvedTableOrView", "UnresolvedView", "UnresolvedIdentifier" ->
          found.names.add(seqField(p, 0));
      case "ScriptTransformation" -> found.scripts.add(String.valueOf(p.productElement(0)));
      case "SetCommand" -> {
        // SetCommand(Option[(key, Option[value])])
        if (p.productElement(0) instanceof scala.Some<?> some
            && some.get() instanceof scala.Tuple2<?, ?> kv) {
          Object v = kv._2();
          found.configs.add(
              List.of(
                  "set",
                  String.valueOf(kv._1()),
                  v instanceof scala.Some<?> s ? String.valueOf(s.get()) : "\u0000none"));
        } else {
          found.configs.add(List.of("list"));
        }
      }
      case "ResetCommand" -> {
        Object k = p.productElement(0);
        found.configs.add(
            List.of("reset", k instanceof scala.Some<?> s ? String.valueOf(s.get()) : "*"));
      }
      case "UnresolvedWith" -> {
        // UnresolvedWith(child, cteRelations: Seq[(String, SubqueryAlias)], ...)
        for (Object rel : CollectionConverters.asJava((scala.collection.Seq<?>) p.productElement(1))) {
          if (rel instanceof scala.Tuple2<?, ?> t) found.ctes.add(String.valueOf(t._1()));
        }
      }
      case "ExecuteImmediateQuery" -> {
        // The literal's statement is parsed again by the session parser at analysis time.
        for (int i = 0; i < p.productArity(); i++) {
          if (p.productElement(i) instanceof scala.util.Left<?, ?> left
              && left.value() instanceof String q
              && immediateDepth < 3) {
            try {
              Object inner = SQLConf.withExistingConf(conf(flags), () -> parse(parser, "plan", q));
              walk(inner, found, flags, immediateDepth + 1);
            } catch (RuntimeException e) {
              // Spark fails the statement when it runs it.
              found.immediateErrors++;
            }
          }
        }
      }
      default -> {}
    }
    // The table a statement writes or changes is its first field in every one of these.
    if (WRITE_ROOTS.contains(cls) || cls.startsWith("Alter") || p instanceof AlterTableCommand) {
      List<String> name = nameOf(p.productElement(0));
      if (name != null) found.writes.add(name);
    }
  }

  private static List<String> nameOf(Object o) {
    if (!(o instanceof scala.Product p) || p.productArity() == 0) return null;
    String cls = o.getClass().getSimpleName();
    if (NAME_NODES.contains(cls)) return seqField(p, 0);
    if (cls.equals("SubqueryAlias") || cls.equals("RelationTimeTravel")) {
      for (int i = 0; i < p.productArity(); i++) {
        List<String> n = nameOf(p.productElement(i));
        if (n != null) return n;
      }
    }
    return null;
  }

  private void stringField(Found found, Object owner, String field, String s) {
    if (owner == null) return;
    String cls = owner.getClass().getSimpleName();
    if (isPathField(field) && !cls.equals("Origin")) found.paths.add(s);
    if (field.equals("provider")) found.providers.add(s);
    if (field.equals("className")) found.classes.add(s);
  }

  private static boolean isPathField(String field) {
    return field.equals("location")
        || field.equals("locationUri")
        || field.equals("path")
        || field.equals("paths");
  }

  private static boolean isPathKey(String k) {
    String l = k.toLowerCase(Locale.ROOT);
    return l.equals("path") || l.equals("paths") || l.equals("location");
  }

  private static String literal(Object o) {
    if (o instanceof scala.Product p
        && o.getClass().getSimpleName().equals("Literal")
        && p.productArity() > 0) {
      return String.valueOf(p.productElement(0));
    }
    return String.valueOf(o);
  }

  private static List<String> seqField(scala.Product p, int i) {
    Object v = p.productElement(i);
    List<String> out = new ArrayList<>();
    if (v instanceof scala.collection.Seq<?> seq) {
      for (Object o : CollectionConverters.asJava(seq)) out.add(String.valueOf(o));
    } else {
      out.add(String.valueOf(v));
    }
    return out;
  }

  /** FunctionIdentifier(funcName, database, catalog) as name parts. */
  private static List<String> functionIdentifier(Object id) {
    List<String> out = new ArrayList<>();
    if (id instanceof scala.Product p && p.productArity() == 3) {
      if (p.productElement(2) instanceof scala.Some<?> c) out.add(String.valueOf(c.get()));
      if (p.productElement(1) instanceof scala.Some<?> d) out.add(String.valueOf(d.get()));
      out.add(String.valueOf(p.productElement(0)));
    } else {
      out.add(String.valueOf(id));
    }
    return out;
  }

  private static List<String> lower(List<String> parts) {
    List<String> out = new ArrayList<>();
    for (String s : parts) out.add(s.toLowerCase(Locale.ROOT));
    return out;
  }

  private static String firstLine(String s) {
    if (s == null) return "";
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  static String str(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        default -> {
          if (c < 0x20 || c == 0x2028 || c == 0x2029 || Character.isSurrogate(c)) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
