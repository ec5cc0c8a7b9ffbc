package io.sparkgate.inspect;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Expression;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Project;
import io.sparkgate.proto.spark.Range;
import io.sparkgate.proto.spark.Read;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.UserContext;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Compares what Spark's session parser finds in a string ({@link SparkOracle}) with the facts Sparkgate's
 * inspector reports for the same string sent where Spark would parse it: a statement as SQL, an expression
 * as an ExpressionString, a name as a NamedTable. What Spark sees and Sparkgate does not is a bypass; what
 * Sparkgate refuses and Spark parses is an over-refusal, counted but allowed.
 */
final class ParserDifferential {
  /** Spark's VariableSubstitution pattern (ConfigReader): where it matches, Spark reads other text. */
  static final Pattern SUBSTITUTION = Pattern.compile("\\$\\{(?:(\\w+?):)?(\\S+?)\\}");

  /** How one string came out. */
  enum Outcome {
    /** Both parsed, and Sparkgate's facts hold everything Spark found. */
    AGREE,
    /** Spark refused it; Sparkgate's reading does not matter (the server fails it). */
    SPARK_REFUSES,
    /** Both refused. */
    BOTH_REFUSE,
    /** Spark parses, Sparkgate says it cannot: refused by the policy, an over-refusal. */
    OVER_REFUSAL,
    /** Spark parses, Sparkgate reports something it does not understand (UNCLASSIFIED): refused. */
    UNCLASSIFIED,
    /** Spark would substitute ${...} first; Sparkgate must refuse (its entry point does). */
    SUBSTITUTION,
    /** Spark found something Sparkgate's facts lack: a bypass. */
    DISAGREE
  }

  record Result(Outcome outcome, List<String> problems, String detail) {}

  private static final UserContext USER = UserContext.newBuilder().setUserId("u").build();
  private final Inspector inspector = new Inspector(InspectorConfig.DEFAULTS);

  /** The text as a client sends it: protobuf strings are UTF-8, so a lone surrogate cannot arrive. */
  static String wire(String text) {
    return new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
  }

  Result compare(SparkOracle.Request request, JsonNode spark) {
    String text = request.text();
    Facts facts = sparkgate(request);
    boolean sparkOk = spark.path("ok").asBoolean();
    boolean substitutes = SUBSTITUTION.matcher(text).find();
    Set<String> unclassified = new TreeSet<>();
    for (Fact f : facts.ofKind(Fact.Kind.UNCLASSIFIED)) unclassified.add(f.subkind());
    boolean unparseable =
        unclassified.contains("unparseable_sql") || unclassified.contains("unparseable_identifier");

    if (substitutes) {
      // Every string Spark's session parser reads enters the inspector through one entry point,
      // which refuses a match of Spark's pattern unread (variable_substitution): statements,
      // expressions and names alike.
      if (!unparseable
          && !unclassified.contains("variable_substitution")
          && !unclassified.contains("sql_too_long")) {
        return new Result(
            Outcome.DISAGREE,
            List.of("${...} that Spark substitutes, not refused: " + facts.all()),
            "");
      }
      return new Result(Outcome.SUBSTITUTION, List.of(), "");
    }
    if (!sparkOk) {
      return new Result(
          unparseable ? Outcome.BOTH_REFUSE : Outcome.SPARK_REFUSES,
          List.of(),
          spark.path("error").asText());
    }
    if (unparseable) {
      // EXECUTE IMMEDIATE 'text' that Spark cannot parse fails when it runs: refused by both.
      if (spark.path("immediate_errors").asInt() > 0)
        return new Result(Outcome.BOTH_REFUSE, List.of(), detail(facts));
      return new Result(Outcome.OVER_REFUSAL, List.of(), detail(facts));
    }
    if (!unclassified.isEmpty()) {
      return new Result(Outcome.UNCLASSIFIED, List.of(), String.join(",", unclassified));
    }
    List<String> problems = missing(request, spark, facts);
    return new Result(problems.isEmpty() ? Outcome.AGREE : Outcome.DISAGREE, problems, "");
  }

  private static String detail(Facts facts) {
    for (Fact f : facts.ofKind(Fact.Kind.UNCLASSIFIED)) {
      if (f.get("detail") != null) return f.get("detail");
    }
    return "";
  }

  /** Sparkgate's facts for the string, read from where Spark's session parser would read it. */
  Facts sparkgate(SparkOracle.Request request) {
    SessionView session = session(request.flags());
    return switch (request.mode()) {
      case PLAN -> inspector.inspectSql(request.text(), session);
      case EXPR ->
          execute(
              inspector,
              session,
              Relation.newBuilder()
                  .setProject(
                      Project.newBuilder()
                          .setInput(Relation.newBuilder().setRange(Range.newBuilder().setEnd(1)))
                          .addExpressions(
                              Expression.newBuilder()
                                  .setExpressionString(
                                      Expression.ExpressionString.newBuilder()
                                          .setExpression(request.text()))))
                  .build());
      case IDENT ->
          execute(
              inspector,
              session,
              Relation.newBuilder()
                  .setRead(
                      Read.newBuilder()
                          .setNamedTable(
                              Read.NamedTable.newBuilder().setUnparsedIdentifier(request.text())))
                  .build());
    };
  }

  /** A fresh session on a Spark 4.0 backend whose parser has these switches, substitution on. */
  static SessionView session(SqlParserFlags f) {
    ParserSettings settings =
        new ParserSettings(
            true,
            true,
            f.enforceReservedKeywords(),
            f.doubleQuotedIdentifiers(),
            f.legacySetOpsPrecedence(),
            f.legacyExponentLiteralAsDecimal(),
            false);
    return new BackendProfile("4.0.0", List.of(), Map.of(), null, null, settings).freshSession();
  }

  private static Facts execute(Inspector inspector, SessionView session, Relation root) {
    return inspector.inspect(
        "spark.connect.SparkConnectService/ExecutePlan",
        ExecutePlanRequest.newBuilder()
            .setSessionId("00000000-0000-4000-8000-000000000000")
            .setUserContext(USER)
            .setOperationId("00000000-0000-4000-8000-000000000001")
            .setPlan(Plan.newBuilder().setRoot(root))
            .build()
            .toByteArray(),
        session);
  }

  /** Everything Spark found that Sparkgate's facts do not hold. */
  static List<String> missing(SparkOracle.Request request, JsonNode spark, Facts facts) {
    List<String> problems = new ArrayList<>();
    Set<String> ctes = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    for (JsonNode c : spark.path("ctes")) ctes.add(c.asText());

    if (request.mode() == SparkOracle.Mode.IDENT) {
      List<String> parts = strings(spark.path("ident"));
      if (!hasTable(facts, parts, Set.of(Fact.Kind.TABLE_READ)))
        problems.add(
            "name " + parts + " not read as that table: " + facts.ofKind(Fact.Kind.TABLE_READ));
      return problems;
    }
    // A command Spark runs must not pass for a query (the statement kinds the policy allows).
    List<Fact> statements = facts.ofKind(Fact.Kind.SQL);
    if (spark.path("command").asBoolean()
        && !statements.isEmpty()
        && statements.get(0).subkind().equals("query"))
      problems.add("command " + spark.path("root").asText() + " read as a query");
    // The object of a command (UnresolvedTable, UnresolvedIdentifier, ...: a table, view, function
    // or
    // variable) must be named somewhere in the facts; which fact is the statement kind's business.
    for (JsonNode n : spark.path("names")) {
      List<String> parts = strings(n);
      if (parts.isEmpty()) continue;
      String last = lower(parts.get(parts.size() - 1));
      boolean seen = false;
      for (Fact f : facts.all()) {
        for (String v : f.attrs().values()) seen |= lower(v).contains(last);
      }
      if (!seen) problems.add("object " + parts);
    }
    for (JsonNode fn : spark.path("functions")) {
      String qualified = String.join(".", strings(fn));
      boolean found = false;
      for (Fact f : facts.ofKind(Fact.Kind.FUNCTION_CALL)) {
        found |= qualified.equals(f.get("qualified")) || qualified.equals(f.get("name"));
      }
      if (!found) problems.add("function " + qualified);
    }
    for (JsonNode rel : spark.path("relations")) {
      List<String> parts = strings(rel);
      if (parts.size() == 1 && ctes.contains(parts.get(0))) continue;
      if (!hasTable(facts, parts, Set.of(Fact.Kind.TABLE_READ, Fact.Kind.TABLE_WRITE)))
        problems.add("relation " + parts);
    }
    for (JsonNode w : spark.path("writes")) {
      List<String> parts = strings(w);
      if (!hasTable(facts, parts, Set.of(Fact.Kind.TABLE_WRITE))) problems.add("write " + parts);
    }
    for (JsonNode s : spark.path("scripts")) {
      if (!hasAttr(facts, Fact.Kind.USER_CODE, "command", s.asText()))
        problems.add("script transform " + s.asText());
    }
    for (JsonNode p : spark.path("paths")) {
      String path = p.asText();
      if (path.isBlank()) continue;
      boolean found = false;
      for (Fact f : facts.ofKind(Fact.Kind.PATH)) found |= samePath(path, f.get("path"));
      for (Fact f : facts.ofKind(Fact.Kind.ADD_RESOURCE)) found |= samePath(path, f.get("path"));
      if (!found) problems.add("path " + path);
    }
    for (JsonNode p : spark.path("providers")) {
      boolean found = false;
      for (Fact f : facts.ofKind(Fact.Kind.DATA_SOURCE))
        found |= p.asText().equalsIgnoreCase(f.get("format"));
      if (!found) problems.add("data source " + p.asText());
    }
    for (JsonNode c : spark.path("classes")) {
      if (!hasAttr(facts, Fact.Kind.CREATE_FUNCTION_USING, "class_name", c.asText())
          && !hasAttr(facts, Fact.Kind.CLASS_NAME, "class_name", c.asText()))
        problems.add("class " + c.asText());
    }
    for (JsonNode c : spark.path("configs")) {
      List<String> conf = strings(c);
      boolean found =
          switch (conf.get(0)) {
            // SET -v lists every setting, as SET does.
            case "set" ->
                conf.get(2).equals("\u0000none")
                    ? hasAttr(
                        facts,
                        Fact.Kind.CONFIG_READ,
                        "key",
                        conf.get(1).equals("-v") ? "*" : conf.get(1))
                    // SET TIME ZONE's value is computed by Spark (an interval's offset, the
                    // server's
                    // zone for LOCAL); the key is what the policy decides on.
                    : conf.get(1).equals("spark.sql.session.timeZone")
                        ? hasAttr(facts, Fact.Kind.CONFIG_SET, "key", conf.get(1))
                        : facts.ofKind(Fact.Kind.CONFIG_SET).stream()
                            .anyMatch(
                                f ->
                                    conf.get(1).equals(f.get("key"))
                                        && conf.get(2).equals(f.get("value")));
            case "reset" -> hasAttr(facts, Fact.Kind.CONFIG_UNSET, "key", conf.get(1));
            default -> hasAttr(facts, Fact.Kind.CONFIG_READ, "key", "*");
          };
      if (!found) problems.add("config " + conf);
    }
    return problems;
  }

  /**
   * The same path, allowing for what Spark's own handling does to it before it is stored: a directory's
   * path becomes a Hadoop Path's URI (doubled slashes collapsed, escaped characters).
   */
  static boolean samePath(String spark, String sparkgate) {
    if (sparkgate == null) return false;
    if (spark.equals(sparkgate)) return true;
    String a = normalized(decoded(spark));
    return a.equals(normalized(sparkgate)) || a.equals(normalized(decoded(sparkgate)));
  }

  private static String normalized(String path) {
    String p = path.replaceAll("(?<!:)/{2,}", "/");
    return p.length() > 1 && p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
  }

  private static String decoded(String path) {
    try {
      return java.net.URLDecoder.decode(path.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return path;
    }
  }

  /** A fact of one of {@code kinds} naming the table Spark's name parts resolve to. */
  static boolean hasTable(Facts facts, List<String> parts, Set<Fact.Kind> kinds) {
    String expected =
        TableRef.resolve(parts, SessionView.SESSION_CATALOG, "default", SessionView.DEFAULT)
            .qualified();
    String last = parts.get(parts.size() - 1);
    for (Fact.Kind kind : kinds) {
      for (Fact f : facts.ofKind(kind)) {
        if (expected.equalsIgnoreCase(f.get("table"))) return true;
        // A one-part name resolves against the current database, which a script's USE changes.
        if (parts.size() == 1 && last.equalsIgnoreCase(f.get("name"))) return true;
      }
    }
    return false;
  }

  private static boolean hasAttr(Facts facts, Fact.Kind kind, String key, String value) {
    for (Fact f : facts.ofKind(kind)) if (value.equals(f.get(key))) return true;
    return false;
  }

  static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    for (JsonNode n : array) out.add(n.asText());
    return out;
  }

  static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }
}
