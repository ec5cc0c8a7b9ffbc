package io.sparkgate.inspect;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.antlr.v4.runtime.ParserRuleContext;
import org.antlr.v4.runtime.tree.IterativeParseTreeWalker;
import org.apache.spark.sql.catalyst.parser.SqlBaseParser;

/**
 * The one way into Spark's parser: every string the backend hands its session parser (SQL statements,
 * {@code EXECUTE IMMEDIATE} text, expression strings, multi-part names, type and schema strings) is read here,
 * after what SparkSqlParser does first. Where the backend's variable substitution is on and Spark's pattern
 * matches, the text Spark parses is not the text sent, so the string is refused unread
 * (variable_substitution), never read as sent; the parser switches come from the session's {@link
 * ParserSettings}. Bounded: text over the configured length is a fact without being lexed; nesting beyond
 * the depth bound is a fact.
 */
final class SqlInspector {
  /** EXECUTE IMMEDIATE 'sql' is read too, to this many levels. */
  static final int MAX_IMMEDIATE_NESTING = 3;

  /**
   * The statement-facts cache's budget, in characters of fact attributes (each fact also weighs
   * {@link #FACT_OVERHEAD_CHARS} for its map): a few megabytes of heap.
   */
  static final long MAX_CACHED_FACT_CHARS = 2_000_000;

  static final int FACT_OVERHEAD_CHARS = 200;

  /**
   * What a statement's facts depend on: its text, where it sits in the request, and the session's names; or,
   * {@code anyState}, only the backend's profile (the fresh {@code session}), when reading it asked nothing of
   * a stored session's own state.
   */
  private record Statement(
      String sql, String origin, String where, SessionView.Fixed session, boolean anyState) {
    // Written out, as every call looks one up: a record's own methods go through method handles,
    // slower while cold, and no field here is null.
    @Override
    public int hashCode() {
      return (((sql.hashCode() * 31 + origin.hashCode()) * 31 + where.hashCode()) * 31
                  + session.hashCode())
              * 31
          + (anyState ? 1 : 0);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Statement s
          && sql.equals(s.sql)
          && origin.equals(s.origin)
          && where.equals(s.where)
          && session.equals(s.session)
          && anyState == s.anyState;
    }
  }

  private final InspectorConfig config;

  /** A parser per combination of switches (at most 16), the configured ones first. */
  private final java.util.concurrent.ConcurrentHashMap<SqlParserFlags, SqlParsing> parsings =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The facts of statements already read (beside the parse-tree cache: walking even a shared tree of
   * {@code SELECT 1} with the listener cost about 6 us, and replaying facts a fraction of that). Per
   * inspector, so its configuration and grammar flags are part of every key.
   */
  private final Cache<Statement, List<Fact>> statements =
      Caffeine.newBuilder()
          .maximumWeight(MAX_CACHED_FACT_CHARS)
          .weigher((Statement k, List<Fact> facts) -> weight(facts))
          .build();

  SqlInspector(InspectorConfig config) {
    this.config = config;
  }

  private SqlParsing parsing(SessionView session) {
    return parsings.computeIfAbsent(
        session.parser().flags(), f -> new SqlParsing(f, config.maxDepth()));
  }

  /**
   * False, with the facts that say why, if the backend would not parse {@code text} as sent: its variable
   * substitution would rewrite it first, or it parses with a setting Sparkgate does not read.
   */
  private static boolean readAsSent(
      String text, String parser, String where, SessionView session, FactSink sink) {
    ParserSettings settings = session.parser();
    String unreadable = settings.unreadable();
    if (unreadable != null) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "backend_parser_setting")
          .put("where", where)
          .put("setting", unreadable)
          .put(
              "detail", "the backend parses with " + unreadable + ", which Sparkgate does not read")
          .emit();
      return false;
    }
    if (!settings.substitutes(text)) return true;
    sink.fact(Fact.Kind.UNCLASSIFIED, "variable_substitution")
        .put("where", where)
        .put("parser", parser)
        .put("reference", ParserSettings.firstReference(text))
        .put("detail", "spark.sql.variable.substitute rewrites ${...} before parsing")
        .emit();
    return false;
  }

  /** A SQL statement (or a scripting block, Spark 4.0+) from {@code origin}. */
  void statement(String sql, String origin, String where, SessionView session, FactSink sink) {
    List<Fact> facts = null;
    if (sql.length() <= SqlParsing.MAX_CACHED_CHARS && session instanceof StoredView stored) {
      facts = stored(sql, origin, where, stored);
    } else if (sql.length() <= SqlParsing.MAX_CACHED_CHARS
        && session instanceof SessionView.Fixed fixed) {
      facts = statements.get(new Statement(sql, origin, where, fixed, false), this::read);
    }
    if (facts == null) {
      // Too long, a session view without value equality, or more facts than a message may have.
      statement(sql, origin, where, new SqlScope(session), sink, 0);
      return;
    }
    for (Fact fact : facts) sink.add(fact);
  }

  /**
   * A statement's facts in a session kept in a shared store, read from it only if the statement asks about
   * its state (names to resolve, functions that may be its own): facts that did not ask are kept for any
   * state, so that {@code SELECT 1} never waits on the store. Null when they overflow the bound.
   */
  private List<Fact> stored(String sql, String origin, String where, StoredView session) {
    Statement anyState = new Statement(sql, origin, where, session.fresh(), true);
    List<Fact> facts = statements.getIfPresent(anyState);
    if (facts != null) return facts;
    if (session.wasRead()) {
      return statements.get(new Statement(sql, origin, where, session.read(), false), this::read);
    }
    FactSink own = new FactSink(config.maxFacts());
    statement(sql, origin, where, new SqlScope(session), own, 0);
    if (own.overflowed()) return null;
    facts = own.build().all();
    statements.put(
        session.wasRead() ? new Statement(sql, origin, where, session.read(), false) : anyState,
        facts);
    return facts;
  }

  /** A statement's facts, or null (not cached) when they overflow the bound. */
  private List<Fact> read(Statement s) {
    FactSink own = new FactSink(config.maxFacts());
    statement(s.sql(), s.origin(), s.where(), new SqlScope(s.session()), own, 0);
    return own.overflowed() ? null : own.build().all();
  }

  private static int weight(List<Fact> facts) {
    int chars = 0;
    for (Fact f : facts) {
      chars += FACT_OVERHEAD_CHARS;
      for (Map.Entry<String, String> a : f.attrs().entrySet())
        chars += a.getKey().length() + a.getValue().length();
    }
    return chars;
  }

  void statement(
      String sql, String origin, String where, SqlScope scope, FactSink sink, int nesting) {
    if (!withinLength(sql, origin, where, sink)) return;
    if (!readAsSent(sql, "statement", where, scope.session, sink)) {
      textFact("unread", sql, origin, where, sink);
      return;
    }
    SqlBaseParser.CompoundOrSingleStatementContext tree;
    try {
      tree = parsing(scope.session).parse(sql, SqlParsing.STATEMENT);
    } catch (SqlParsing.SqlSyntaxException e) {
      // Statements only a session extension of the backend reads (Iceberg's ALTER TABLE ... ADD
      // PARTITION FIELD).
      if (ExtensionSql.read(sql, scope.session.extensions(), origin, where, scope, this, sink))
        return;
      textFact("unparseable", sql, origin, where, sink);
      sink.fact(Fact.Kind.UNCLASSIFIED, "unparseable_sql")
          .put("where", where)
          .put("detail", e.getMessage())
          .put("sql", sql)
          .emit();
      return;
    }
    StatementKinds.Reading kind = StatementKinds.TABLE.read(tree);
    if (ExtensionSql.readBeforeSpark(
        kind.kind(), sql, scope.session.extensions(), origin, where, scope, this, sink)) {
      return;
    }
    sink.fact(Fact.Kind.SQL, kind.kind())
        .put("class", kind.kindClass())
        .put("insert", kind.insert())
        .put("sql", sql)
        .put("length", sql.length())
        .put("origin", origin)
        .put("where", where)
        .emit();
    StatementKinds.reportUnknown(kind, where, sink);
    walk(tree, new SqlListener(this, new SqlText(sql), scope, sink, where, nesting));
  }

  /** The SQL fact of a statement that was not read: its text, for the audit record and the refusal. */
  private static void textFact(
      String subkind, String sql, String origin, String where, FactSink sink) {
    sink.fact(Fact.Kind.SQL, subkind)
        .put("sql", sql)
        .put("length", sql.length())
        .put("origin", origin)
        .put("where", where)
        .emit();
  }

  /** An expression string (selectExpr, expr(), filter("...")): Spark parses these with singleExpression. */
  void expression(String text, String where, SessionView session, FactSink sink) {
    if (!withinLength(text, "expression", where, sink)) return;
    sink.fact(Fact.Kind.EXPRESSION, "expression")
        .put("text", text)
        .put("length", text.length())
        .put("where", where)
        .emit();
    if (!readAsSent(text, "expression", where, session, sink)) return;
    SqlBaseParser.SingleExpressionContext tree;
    try {
      tree = parsing(session).parse(text, SqlParsing.EXPRESSION);
    } catch (SqlParsing.SqlSyntaxException e) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "unparseable_sql")
          .put("where", where)
          .put("detail", e.getMessage())
          .put("sql", text)
          .put("origin", "expression")
          .emit();
      return;
    }
    walk(tree, new SqlListener(this, new SqlText(text), new SqlScope(session), sink, where, 0));
  }

  /**
   * A name from a request field as the session parser's parseMultipartIdentifier reads it (table names in
   * plans and writes, user-defined function names, catalog RPC names), or null: it does not parse, or
   * substitution would rewrite it first (reported here).
   */
  List<String> sessionIdentifier(String text, String where, SessionView session, FactSink sink) {
    if (text.length() > config.maxSqlChars()) return null;
    if (!readAsSent(text, "identifier", where, session, sink)) return null;
    return identifier(text, session);
  }

  /**
   * A name as CatalystSqlParser's parseMultipartIdentifier reads it: no substitution (the value of an {@code
   * IDENTIFIER('...')} literal, whose statement was read as a whole), or null if it does not parse.
   */
  List<String> multipartIdentifier(String text, SessionView session) {
    if (text.length() > config.maxSqlChars()) return null;
    return identifier(text, session);
  }

  private List<String> identifier(String text, SessionView session) {
    try {
      return parts(parsing(session).parse(text, SqlParsing.IDENTIFIER).multipartIdentifier());
    } catch (SqlParsing.SqlSyntaxException e) {
      return null;
    }
  }

  /**
   * A procedure's string argument: procedures hand theirs to the session's parser (table names, Iceberg's
   * rewrite filters, Hudi's show_* filters, which it evaluates), so none may be rewritten by substitution.
   */
  void procedureString(String text, String where, SessionView session, FactSink sink) {
    readAsSent(text, "procedure_argument", where, session, sink);
  }

  /** A string value bound to a SQL text's parameter: see {@code Detectors.parameters}. */
  void boundValue(String text, String where, SessionView session, FactSink sink) {
    readAsSent(text, "parameter", where, session, sink);
  }

  /**
   * A type or schema string the session parser reads (Cast.type_str, an unparsed DataType, a local
   * relation's or DDLParse's schema): only names and types, but Spark substitutes in it first, and its
   * comments and error messages then show what substitution read.
   */
  void dataType(String text, String where, SessionView session, FactSink sink) {
    if (withinLength(text, "data_type", where, sink)) {
      readAsSent(text, "data_type", where, session, sink);
    }
  }

  static List<String> parts(SqlBaseParser.MultipartIdentifierContext ctx) {
    List<String> out = new ArrayList<>();
    for (var part : ctx.errorCapturingIdentifier())
      out.add(SqlText.unquoteIdentifier(part.identifier().getText()));
    return out;
  }

  private boolean withinLength(String sql, String origin, String where, FactSink sink) {
    if (sql.length() <= config.maxSqlChars()) return true;
    sink.fact(Fact.Kind.SQL, "too_long")
        .put("length", sql.length())
        .put("origin", origin)
        .put("where", where)
        .put("sql", sql.substring(0, Math.min(sql.length(), 256)))
        .emit(); // the bound may be under 256
    sink.fact(Fact.Kind.UNCLASSIFIED, "sql_too_long")
        .put("where", where)
        .put("length", sql.length())
        .put("limit", config.maxSqlChars())
        .emit();
    return false;
  }

  private static void walk(ParserRuleContext tree, SqlListener listener) {
    // The iterative walker: the default ParseTreeWalker recurses once per tree level.
    new IterativeParseTreeWalker().walk(listener, tree);
  }

  /** The statement kind: Spark's labelled alternative, e.g. query, createTable, setConfiguration, compound. */
  static String statementKind(SqlBaseParser.CompoundOrSingleStatementContext tree) {
    if (tree.singleCompoundStatement() != null) return "compound";
    var single = tree.singleStatement();
    if (single == null) return "unknown";
    ParserRuleContext s =
        single.statement() != null ? single.statement() : single.setResetStatement();
    return s == null ? "empty" : kindOf(s);
  }

  static String kindOf(ParserRuleContext s) {
    if (s instanceof SqlBaseParser.StatementDefaultContext) return "query";
    if (s instanceof SqlBaseParser.DmlStatementContext dml) return kindOf(dml.dmlStatementNoWith());
    if (s instanceof SqlBaseParser.VisitExecuteImmediateContext) return "executeImmediate";
    String name = s.getClass().getSimpleName();
    if (name.endsWith("Context")) name = name.substring(0, name.length() - "Context".length());
    return name.isEmpty() ? "unknown" : Character.toLowerCase(name.charAt(0)) + name.substring(1);
  }
}
