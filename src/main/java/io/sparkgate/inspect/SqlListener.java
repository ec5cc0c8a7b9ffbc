package io.sparkgate.inspect;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.antlr.v4.runtime.ParserRuleContext;
import org.antlr.v4.runtime.Token;
import org.antlr.v4.runtime.tree.ParseTree;
import org.antlr.v4.runtime.tree.TerminalNode;
import org.apache.spark.sql.catalyst.parser.SqlBaseLexer;
import org.apache.spark.sql.catalyst.parser.SqlBaseParser;
import org.apache.spark.sql.catalyst.parser.SqlBaseParserBaseListener;

/**
 * Turns one parse tree into facts. Names come from identifier rules (so comments, quoting and string
 * literals are handled by the grammar, never by text search); spans come from token offsets.
 */
final class SqlListener extends SqlBaseParserBaseListener {
  private final SqlInspector inspector;
  private final SqlText text;
  private final SqlScope scope;
  private final FactSink sink;
  private final String where;
  private final int nesting;

  SqlListener(
      SqlInspector inspector,
      SqlText text,
      SqlScope scope,
      FactSink sink,
      String where,
      int nesting) {
    this.inspector = inspector;
    this.text = text;
    this.scope = scope;
    this.sink = sink;
    this.where = where;
    this.nesting = nesting;
  }

  // ---- statements inside statements
  // -------------------------------------------------------------------------

  /**
   * A statement inside another (a SQL script's body, EXPLAIN's subject) is a statement of its own kind: the
   * top-level SQL fact names only the outer one, and a policy on statement kinds must see them all.
   */
  @Override
  public void enterEveryRule(ParserRuleContext ctx) {
    if (!(ctx instanceof SqlBaseParser.StatementContext
        || ctx instanceof SqlBaseParser.SetResetStatementContext)) return;
    if (ctx.getParent() instanceof SqlBaseParser.SingleStatementContext) return;
    StatementKinds.Reading kind = StatementKinds.TABLE.nested(ctx);
    sink.fact(Fact.Kind.SQL, kind.kind())
        .put("class", kind.kindClass())
        .put("insert", kind.insert())
        .put("nested", "true")
        .put("origin", "statement")
        .put("where", where)
        .put("span_start", text.start(ctx))
        .put("span_end", text.end(ctx))
        .emit();
    StatementKinds.reportUnknown(kind, where, sink);
  }

  // ---- tables
  // ---------------------------------------------------------------------------------------------

  @Override
  public void enterTableName(SqlBaseParser.TableNameContext ctx) {
    List<String> parts = names(ctx.identifierReference());
    if (parts == null) return;
    if (parts.size() == 1 && isCte(ctx, parts.get(0))) return;
    TableRef ref = scope.resolve(parts);
    FactSink.Builder read = tableFact(Fact.Kind.TABLE_READ, "sql", ref, ctx.identifierReference());
    TempViews.mark(parts, scope.session, read);
    if (ctx.optionsClause() != null) {
      for (var p : ctx.optionsClause().propertyList().property())
        read.put("option." + propertyKey(p), propertyValue(p));
    }
    read.emit();
    fileQuery(parts);
    if (ctx.temporalClause() != null) timeTravel(ref, parts.size(), ctx);
  }

  @Override
  public void enterTable(SqlBaseParser.TableContext ctx) {
    List<String> parts = names(ctx.identifierReference());
    if (parts == null || (parts.size() == 1 && isCte(ctx, parts.get(0)))) return;
    FactSink.Builder read =
        tableFact(Fact.Kind.TABLE_READ, "sql", scope.resolve(parts), ctx.identifierReference());
    TempViews.mark(parts, scope.session, read);
    read.emit();
    fileQuery(parts);
  }

  private void fileQuery(List<String> parts) {
    FileQueries.report(sink, parts, "sql", where, scope.session.defaultFileSystem());
  }

  /** Every other identifierReference: its role is decided by the statement it sits in. */
  @Override
  public void enterIdentifierReference(SqlBaseParser.IdentifierReferenceContext ctx) {
    ParserRuleContext parent = ctx.getParent();
    if (parent instanceof SqlBaseParser.TableNameContext
        || parent instanceof SqlBaseParser.TableContext
        || parent instanceof SqlBaseParser.CreateFunctionContext) {
      return; // handled by their own rules
    }
    List<String> parts = names(ctx);
    if (parts == null) return;
    String kind = SqlInspector.kindOf(parent);
    if (parent instanceof SqlBaseParser.UseContext
        || parent instanceof SqlBaseParser.UseNamespaceContext) {
      scope.use(parts);
      catalogOp("set_current_database", ctx)
          .put("name", String.join(".", parts))
          .put("catalog", scope.catalog())
          .put("database", scope.database())
          .emit();
    } else if (parent instanceof SqlBaseParser.CallContext call) {
      List<ProcedureCall.Argument> arguments = new ArrayList<>();
      for (var arg : call.functionArgument()) {
        var named = arg.namedArgumentExpression();
        ParserRuleContext value = named == null ? arg.expression() : named.value;
        arguments.add(
            new ProcedureCall.Argument(
                named == null ? "" : SqlText.unquoteIdentifier(named.key.getText()),
                literalString(value),
                text.text(arg)));
      }
      ProcedureCall.report(parts, text.text(ctx), arguments, scope, inspector, sink, where);
    } else if (parent instanceof SqlBaseParser.CreateUserDefinedFunctionContext udf) {
      String language = udf.routineCharacteristics() == null ? null : languageOf(udf);
      if (language == null || language.equalsIgnoreCase("SQL")) {
        // A SQL function's body is SQL in this same tree: its functions, tables and paths are facts
        // as usual.
        catalogOp("create_sql_function", ctx)
            .put("name", String.join(".", parts))
            .put("temporary", udf.TEMPORARY() != null ? "true" : "false")
            .emit();
      } else {
        sink.fact(Fact.Kind.USER_CODE, "routine_language")
            .put("name", String.join(".", parts))
            .put("language", language)
            .put("where", where)
            .emit();
      }
    } else if (kind.contains("Namespace")
        || kind.startsWith("showTable")
        || kind.equals("showViews")
        || kind.equals("analyzeTables")) {
      FactSink.Builder op = catalogOp(kind, ctx).put("name", String.join(".", parts));
      TableRef.namespace(parts, scope.catalog(), scope.session).addNamespaceTo(op);
      op.emit();
    } else if (kind.contains("Function") || kind.contains("Variable") || kind.startsWith("show")) {
      catalogOp(kind, ctx).put("name", String.join(".", parts)).emit();
      if (parent instanceof SqlBaseParser.ShowColumnsContext columns && columns.ns != null) {
        List<String> qualified = new ArrayList<>(SqlInspector.parts(columns.ns));
        qualified.addAll(parts);
        parts = qualified; // SHOW COLUMNS FROM t IN ns: the table t of ns
      }
      if (SHOWS_OF_A_TABLE.contains(kind)) {
        tableFact(Fact.Kind.TABLE_READ, "sql", scope.resolve(parts), ctx)
            .put("statement", kind)
            .emit();
      }
    } else if (parent instanceof SqlBaseParser.MergeIntoTableContext merge && merge.source == ctx) {
      tableFact(Fact.Kind.TABLE_READ, "sql", scope.resolve(parts), ctx)
          .put("statement", kind)
          .emit();
    } else if (parent instanceof SqlBaseParser.CreateViewContext view && view.TEMPORARY() != null) {
      // A session's own view, or a global one that every session reads in the global temp database.
      if (view.GLOBAL() != null) {
        TableRef global =
            new TableRef(SessionView.SESSION_CATALOG, GLOBAL_TEMP, parts.get(parts.size() - 1));
        tableFact(Fact.Kind.TABLE_WRITE, kind, global, ctx).emit();
      } else {
        tableFact(Fact.Kind.TABLE_WRITE, kind, scope.resolve(parts), ctx)
            .put("temporary", "true")
            .emit();
      }
    } else if (parent instanceof SqlBaseParser.CacheTableContext cache && cache.query() != null) {
      // CACHE TABLE v AS SELECT ...: a temporary view of the query, cached.
      tableFact(Fact.Kind.TABLE_WRITE, kind, scope.resolve(parts), ctx)
          .put("temporary", "true")
          .emit();
    } else if (parent instanceof SqlBaseParser.RenameTableContext rename) {
      TableRef from = scope.resolve(parts);
      tableFact(Fact.Kind.TABLE_WRITE, kind, from, ctx).emit();
      if (rename.to != null) renameTarget(from, rename.to);
    } else if (isWrite(parent, kind)) {
      FactSink.Builder write = tableFact(Fact.Kind.TABLE_WRITE, kind, scope.resolve(parts), ctx);
      if (parent instanceof SqlBaseParser.DropViewContext
          || parent instanceof SqlBaseParser.DropTableContext) {
        TempViews.mark(
            parts, scope.session, write); // Spark drops a temporary view of the name first
      }
      write.emit();
      fileQuery(parts);
    } else {
      FactSink.Builder read =
          tableFact(Fact.Kind.TABLE_READ, "sql", scope.resolve(parts), ctx).put("statement", kind);
      TempViews.mark(parts, scope.session, read);
      read.emit();
    }
  }

  /** SHOW statements whose name is a table whose metadata they read. */
  private static final java.util.Set<String> SHOWS_OF_A_TABLE =
      java.util.Set.of("showColumns", "showTblProperties", "showPartitions", "showCreateTable");

  /** Spark's default {@code spark.sql.globalTempDatabase}: where global temporary views live. */
  static final String GLOBAL_TEMP = "global_temp";

  /**
   * The new name of {@code ALTER TABLE|VIEW from RENAME TO to}: a name in the source's catalog (Spark does
   * not read a catalog in it), in the source's namespace when it has one part.
   */
  private void renameTarget(TableRef from, SqlBaseParser.MultipartIdentifierContext to) {
    List<String> parts = SqlInspector.parts(to);
    String name = parts.get(parts.size() - 1);
    String namespace =
        parts.size() == 1 ? from.database() : String.join(".", parts.subList(0, parts.size() - 1));
    tableFact(
            Fact.Kind.TABLE_WRITE,
            "renameTableTarget",
            new TableRef(from.catalog(), namespace, name),
            to)
        .emit();
  }

  /** SHOW TABLES|VIEWS and ANALYZE TABLES without IN: a listing of the current namespace. */
  @Override
  public void enterShowTables(SqlBaseParser.ShowTablesContext ctx) {
    if (ctx.identifierReference() == null) currentNamespaceListing("showTables", ctx);
  }

  @Override
  public void enterShowViews(SqlBaseParser.ShowViewsContext ctx) {
    if (ctx.identifierReference() == null) currentNamespaceListing("showViews", ctx);
  }

  @Override
  public void enterShowTableExtended(SqlBaseParser.ShowTableExtendedContext ctx) {
    if (ctx.ns == null) currentNamespaceListing("showTableExtended", ctx);
  }

  @Override
  public void enterAnalyzeTables(SqlBaseParser.AnalyzeTablesContext ctx) {
    if (ctx.identifierReference() == null) currentNamespaceListing("analyzeTables", ctx);
  }

  private void currentNamespaceListing(String kind, ParserRuleContext ctx) {
    FactSink.Builder op = catalogOp(kind, ctx).put("name", "");
    new TableRef(scope.catalog(), scope.database(), "").addNamespaceTo(op);
    op.emit();
  }

  private static boolean isWrite(ParserRuleContext parent, String kind) {
    if (parent instanceof SqlBaseParser.CreateTableHeaderContext
        || parent instanceof SqlBaseParser.ReplaceTableHeaderContext) {
      return true;
    }
    for (String prefix :
        List.of(
            "insert",
            "delete",
            "update",
            "merge",
            "drop",
            "truncate",
            "alter",
            "rename",
            "add",
            "set",
            "unset",
            "repair",
            "recover",
            "create",
            "replace",
            "comment",
            "load",
            "hive",
            "cache",
            "uncache",
            "refresh",
            "analyze")) {
      if (kind.startsWith(prefix)) return true;
    }
    return false;
  }

  /** SQL, PYTHON, ...: the word after LANGUAGE, or null when not given (SQL). */
  private String languageOf(SqlBaseParser.CreateUserDefinedFunctionContext udf) {
    for (var lang : udf.routineCharacteristics().routineLanguage()) {
      return lang.SQL() != null
          ? "SQL"
          : lang.IDENTIFIER() != null
              ? SqlText.unquoteIdentifier(lang.IDENTIFIER().getText())
              : text.text(lang);
    }
    return null;
  }

  // ---- time travel
  // ----------------------------------------------------------------------------------------

  private void timeTravel(TableRef ref, int partsWritten, SqlBaseParser.TableNameContext relation) {
    SqlBaseParser.IdentifierReferenceContext table = relation.identifierReference();
    SqlBaseParser.TemporalClauseContext tc = relation.temporalClause();
    boolean version = tc.VERSION() != null || tc.SYSTEM_VERSION() != null;
    ParserRuleContext value = version ? tc.version() : tc.timestamp;
    StringBuilder syntax = new StringBuilder();
    for (ParseTree child : tc.children) {
      if (!(child instanceof TerminalNode t)) break;
      if (syntax.length() > 0) syntax.append(' ');
      syntax.append(t.getText().toUpperCase(Locale.ROOT));
    }
    String valueType = valueType(value);
    FactSink.Builder b = sink.fact(Fact.Kind.TIME_TRAVEL, version ? "VERSION" : "TIMESTAMP");
    ref.addTo(b);
    b.put("syntax", syntax.toString())
        .put("value_text", text.text(value))
        .put("value", "string".equals(valueType) ? stringValue(value) : text.text(value))
        .put("value_type", valueType)
        .put("table_start", text.start(table))
        .put("table_end", text.end(table))
        .put("clause_start", text.start(tc))
        .put("clause_end", text.end(tc))
        .put("value_start", text.start(value))
        .put("value_end", text.end(value))
        .put("table_parts", partsWritten)
        .put("source", "sql")
        .put("where", where);
    // A rewrite that changes the table name changes its implicit alias; it needs to know whether
    // there is an explicit one, and where one would go (after any options and sample clause).
    var alias = relation.tableAlias();
    if (alias != null && alias.strictIdentifier() != null) {
      b.put("alias", SqlText.unquoteIdentifier(alias.strictIdentifier().getText()));
    } else {
      int end = text.end(tc);
      if (relation.optionsClause() != null) end = Math.max(end, text.end(relation.optionsClause()));
      if (relation.sample() != null) end = Math.max(end, text.end(relation.sample()));
      b.put("alias", "").put("alias_insert", end);
    }
    b.emit();
  }

  /** integer, string (one or more adjacent string literals) or expression (anything else). */
  private static String valueType(ParserRuleContext value) {
    List<Token> tokens = tokensOf(value);
    if (tokens.size() == 1 && tokens.get(0).getType() == SqlBaseLexer.INTEGER_VALUE)
      return "integer";
    boolean allStrings = !tokens.isEmpty();
    for (Token t : tokens) {
      allStrings &=
          t.getType() == SqlBaseLexer.STRING_LITERAL
              || t.getType() == SqlBaseLexer.DOUBLEQUOTED_STRING;
    }
    return allStrings ? "string" : "expression";
  }

  private static String stringValue(ParserRuleContext value) {
    StringBuilder b = new StringBuilder();
    for (Token t : tokensOf(value)) b.append(SqlText.unescapeString(t.getText()));
    return b.toString();
  }

  /** The default-channel tokens of a rule, leaves in order (iteratively: no recursion over the tree). */
  private static List<Token> tokensOf(ParserRuleContext ctx) {
    List<Token> out = new ArrayList<>();
    java.util.ArrayDeque<ParseTree> stack = new java.util.ArrayDeque<>();
    stack.push(ctx);
    while (!stack.isEmpty()) {
      ParseTree node = stack.pop();
      if (node instanceof TerminalNode t) {
        out.add(t.getSymbol());
      } else {
        for (int i = node.getChildCount() - 1; i >= 0; i--) stack.push(node.getChild(i));
      }
    }
    return out;
  }

  // ---- functions
  // ------------------------------------------------------------------------------------------

  @Override
  public void enterFunctionCall(SqlBaseParser.FunctionCallContext ctx) {
    if (ctx.functionName().identFunc != null && !identifierClause(ctx)) {
      // IDENTIFIER with other than one plain argument is no identifier clause: Spark calls a
      // function
      // named identifier (AstBuilder.visitFunctionCall), which a catalog or session may define.
      FunctionNames.fact(sink, "scalar", List.of("identifier"), scope.session)
          .put("written", text.text(ctx.functionName()))
          .put("source", "sql")
          .put("where", where)
          .emit();
      return;
    }
    function(ctx.functionName(), false);
  }

  /** Spark 4.0's test for IDENTIFIER(x) as a name: one argument and no DISTINCT/ALL, FILTER, NULLS or OVER. */
  private static boolean identifierClause(SqlBaseParser.FunctionCallContext ctx) {
    return ctx.argument.size() == 1
        && ctx.setQuantifier() == null
        && ctx.where == null
        && ctx.nullsOption == null
        && ctx.windowSpec() == null;
  }

  /**
   * Table-valued functions of extensions read tables by path ({@code hudi_metadata('/data/t')}): every string
   * argument that looks like a path is one.
   */
  @Override
  public void enterFunctionTable(SqlBaseParser.FunctionTableContext ctx) {
    function(ctx.functionName(), true);
    for (var arg : ctx.functionTableArgument()) pathLiterals(arg, "table_function_argument");
    hudiTableArgument(ctx);
  }

  /**
   * Hudi's table-valued functions (hudi_query, hudi_table_changes, hudi_metadata, ...) read the table their
   * first argument names, or the table at that path (a PATH fact above): the name is a TABLE_READ, parsed as
   * Spark's session parser parses names.
   */
  private void hudiTableArgument(SqlBaseParser.FunctionTableContext ctx) {
    String written = ctx.functionName().getText().replace("`", "");
    String fn = written.substring(written.lastIndexOf('.') + 1).toLowerCase(Locale.ROOT);
    if (!fn.startsWith("hudi_")) return;
    if (ctx.functionTableArgument().isEmpty()) return;
    String literal = literalString(ctx.functionTableArgument(0));
    if (literal == null || LocalPaths.looksLikePath(literal)) return;
    List<String> parts = inspector.multipartIdentifier(literal, scope.session);
    if (parts == null) return; // no name: the grants find the call unresolved
    tableFact(
            Fact.Kind.TABLE_READ,
            "table_function",
            scope.resolve(parts),
            ctx.functionTableArgument(0))
        .put("function", fn)
        .emit();
  }

  private static List<String> parts(SqlBaseParser.TableIdentifierContext ctx) {
    List<String> out = new ArrayList<>();
    for (var part : ctx.errorCapturingIdentifier())
      out.add(SqlText.unquoteIdentifier(part.identifier().getText()));
    return out;
  }

  /** CREATE TABLE t LIKE s: creates t, and reads s's definition. */
  @Override
  public void enterCreateTableLike(SqlBaseParser.CreateTableLikeContext ctx) {
    if (ctx.target != null) {
      tableFact(
              Fact.Kind.TABLE_WRITE,
              "createTableLike",
              scope.resolve(parts(ctx.target)),
              ctx.target)
          .emit();
    }
    if (ctx.source != null) {
      tableFact(Fact.Kind.TABLE_READ, "sql", scope.resolve(parts(ctx.source)), ctx.source)
          .put("statement", "createTableLike")
          .emit();
    }
  }

  /**
   * LATERAL VIEW f(...): Spark calls the generator {@code f} by its qualified name (an UnresolvedGenerator,
   * resolved through the function registry like any call), so a catalog function can run here too.
   */
  @Override
  public void enterLateralView(SqlBaseParser.LateralViewContext ctx) {
    List<String> parts = new ArrayList<>();
    for (var id : ctx.qualifiedName().identifier())
      parts.add(SqlText.unquoteIdentifier(id.getText()));
    FunctionNames.fact(sink, "generator", parts, scope.session)
        .put("written", text.text(ctx.qualifiedName()))
        .put("source", "sql")
        .put("where", where)
        .emit();
  }

  /**
   * Syntax that Spark 4.0's AstBuilder turns into a call by name (UnresolvedFunction), resolved like any
   * other: {@code EXTRACT(f FROM x)} calls {@code extract}, {@code x [NOT] BETWEEN a AND b} calls
   * {@code between}. Other keyword syntax (TRIM, POSITION, CAST, ...) builds its expression directly.
   */
  @Override
  public void enterExtract(SqlBaseParser.ExtractContext ctx) {
    syntaxCall("extract", ctx);
  }

  @Override
  public void enterPredicate(SqlBaseParser.PredicateContext ctx) {
    if (ctx.kind != null && ctx.kind.getType() == SqlBaseLexer.BETWEEN) syntaxCall("between", ctx);
  }

  private void syntaxCall(String name, ParserRuleContext ctx) {
    FunctionNames.fact(sink, "scalar", List.of(name), scope.session)
        .put("written", text.text(ctx))
        .put("source", "sql")
        .put("where", where)
        .emit();
  }

  private void function(SqlBaseParser.FunctionNameContext fn, boolean tableValued) {
    List<String> parts;
    if (fn.identFunc != null) {
      // IDENTIFIER(x) with x taken as the call's argument: Spark's identifier clause naming a
      // column (SELECT IDENTIFIER('c1') FROM t), which calls no function. As a table function it
      // names nothing we can read, so it is refused.
      if (tableValued) {
        sink.unclassified(
            "hidden_identifier", where, "table function " + text.text(fn.getParent()));
      }
      return;
    }
    if (fn.IDENTIFIER_KW() != null) {
      // IDENTIFIER('`reflect`'): Spark parses the string as a multi-part identifier, quotes,
      // comments and all.
      String literal = literalIdentifier(fn.expression());
      parts = literal == null ? null : inspector.multipartIdentifier(literal, scope.session);
      if (parts == null) {
        sink.unclassified(
            "hidden_identifier",
            where,
            "function name from IDENTIFIER(" + text.text(fn.expression()) + ")");
        return;
      }
    } else if (fn.qualifiedName() != null) {
      parts = new ArrayList<>();
      for (var id : fn.qualifiedName().identifier())
        parts.add(SqlText.unquoteIdentifier(id.getText()));
    } else {
      parts = List.of(text.text(fn)); // FILTER, LEFT, RIGHT used as function names
    }
    FunctionNames.fact(sink, tableValued ? "table_valued" : "scalar", parts, scope.session)
        .put("written", text.text(fn))
        .put("source", "sql")
        .put("where", where)
        .emit();
  }

  // ---- configuration
  // --------------------------------------------------------------------------------------

  /** SET key=value / SET key / SET -v / SET: Spark splits the raw remainder at the first '='. */
  @Override
  public void enterSetConfiguration(SqlBaseParser.SetConfigurationContext ctx) {
    // Read as SparkSqlAstBuilder.visitSetConfiguration (4.0) reads it, character for character:
    // String.trim
    // (not strip: U+3000 and other Unicode spaces are part of the key or value), trailing
    // semicolons
    // removed by its patterns, comments included. A value read differently is a value the policy
    // never saw.
    if (ctx.configKey() != null) {
      // SET `key` [= value]: the key is the quoted identifier, unquoted (Spark's parser strips the
      // quotes).
      String key = SqlText.unquoteIdentifier(text.text(ctx.configKey()));
      if (ctx.EQ() == null) {
        sink.fact(Fact.Kind.CONFIG_READ, "sql").put("key", key).put("where", where).emit();
        return;
      }
      Matcher value = SET_VALUE.matcher(text.remainder(ctx.EQ().getSymbol()).trim());
      if (value.matches()) configSet(key, value.group(1));
      else sink.unclassified("unparseable_sql", where, "SET `" + key + "` in a form Spark refuses");
      return;
    }
    // Spark matches the raw text after SET (comments included) against these forms and refuses
    // anything else as a parse error; whatever it would refuse is not read here as a key.
    String raw = text.remainder(ctx.SET().getSymbol()).trim().replaceAll(";+$", "");
    Matcher set = SET_KEY_VALUE.matcher(raw);
    if (set.matches()) {
      configSet(set.group(1), set.group(2).trim());
      return;
    }
    Matcher key = SET_KEY.matcher(raw);
    if (key.matches() || raw.trim().equals("-v") || raw.trim().isEmpty()) {
      // SET key reads one setting; SET and SET -v list them all.
      sink.fact(Fact.Kind.CONFIG_READ, "sql")
          .put("key", key.matches() ? key.group(1) : "*")
          .put("where", where)
          .emit();
      return;
    }
    sink.unclassified("unparseable_sql", where, "SET in a form Spark refuses: " + raw);
  }

  @Override
  public void enterSetQuotedConfiguration(SqlBaseParser.SetQuotedConfigurationContext ctx) {
    String key;
    if (ctx.configKey() != null) {
      key = SqlText.unquoteIdentifier(text.text(ctx.configKey()));
    } else {
      Token set = ctx.SET().getSymbol();
      Token eq = ctx.EQ().getSymbol();
      key = text.sql.substring(text.end(set), text.start(eq)).trim();
    }
    configSet(key, SqlText.unquoteIdentifier(text.text(ctx.configValue())));
  }

  @Override
  public void enterResetConfiguration(SqlBaseParser.ResetConfigurationContext ctx) {
    String raw = text.remainder(ctx.RESET().getSymbol()).trim().replaceAll(";+$", "");
    Matcher k = SET_KEY.matcher(raw);
    String key = k.matches() ? k.group(1) : raw.trim();
    sink.fact(Fact.Kind.CONFIG_UNSET, "sql")
        .put("key", key.isEmpty() ? "*" : key)
        .put("where", where)
        .emit();
  }

  @Override
  public void enterResetQuotedConfiguration(SqlBaseParser.ResetQuotedConfigurationContext ctx) {
    sink.fact(Fact.Kind.CONFIG_UNSET, "sql")
        .put("key", SqlText.unquoteIdentifier(text.text(ctx.configKey())))
        .put("where", where)
        .emit();
  }

  @Override
  public void enterSetTimeZone(SqlBaseParser.SetTimeZoneContext ctx) {
    String value =
        ctx.timezone() != null
            ? text.text(ctx.timezone())
            : ctx.interval() != null
                ? text.text(ctx.interval())
                : stripSemicolons(text.remainder(ctx.ZONE().getSymbol()).strip());
    if (value.startsWith("'") || value.startsWith("\"")) value = SqlText.unescapeString(value);
    configSet("spark.sql.session.timeZone", value);
  }

  private void configSet(String key, String value) {
    ParserSettings.checkChange(key, scope.session, where, sink);
    sink.fact(Fact.Kind.CONFIG_SET, "sql")
        .put("key", key)
        .put("value", value)
        .put("where", where)
        .emit();
  }

  /** Spark's {@code configKeyValueDef} and {@code configKeyDef} (SparkSqlParser), matched whole. */
  private static final Pattern SET_KEY_VALUE =
      Pattern.compile("([a-zA-Z_\\d\\\\.:]+)\\s*=([^;]*);*");

  private static final Pattern SET_KEY = Pattern.compile("([a-zA-Z_\\d\\\\.:]+)\\s*$");

  /** Spark's {@code configValueDef}: the value of SET `key` = value, up to trailing semicolons. */
  private static final Pattern SET_VALUE = Pattern.compile("([^;]*);*");

  private static String stripSemicolons(String s) {
    int end = s.length();
    while (end > 0 && (s.charAt(end - 1) == ';' || Character.isWhitespace(s.charAt(end - 1))))
      end--;
    return s.substring(0, end);
  }

  // ---- resources, functions with code, dynamic SQL, catalogs
  // -----------------------------------------------

  @Override
  public void enterManageResource(SqlBaseParser.ManageResourceContext ctx) {
    if (ctx.ADD() == null) return; // LIST JAR|FILE|ARCHIVE only reads
    String type = ctx.identifier().getText().toLowerCase(Locale.ROOT);
    if (type.endsWith("s")) type = type.substring(0, type.length() - 1);
    List<String> paths = SqlText.resourcePaths(text.remainder(ctx.identifier().getStop()));
    if (paths.isEmpty()) paths = List.of("");
    for (String path : paths) {
      sink.fact(Fact.Kind.ADD_RESOURCE, type).put("path", path).put("where", where).emit();
      LocalPaths.report(sink, path, "add_" + type, where, fs());
    }
  }

  @Override
  public void enterCreateFunction(SqlBaseParser.CreateFunctionContext ctx) {
    List<String> parts = names(ctx.identifierReference());
    List<String> resources = new ArrayList<>();
    for (var r : ctx.resource()) {
      resources.add(
          r.identifier().getText().toLowerCase(Locale.ROOT)
              + " "
              + SqlText.unescapeString(r.stringLit().getText()));
    }
    sink.fact(Fact.Kind.CREATE_FUNCTION_USING, ctx.TEMPORARY() != null ? "temporary" : "persistent")
        .put("name", parts == null ? text.text(ctx.identifierReference()) : String.join(".", parts))
        .put("class_name", SqlText.unescapeString(ctx.stringLit().getText()))
        .put("resources", String.join(",", resources))
        .put("where", where)
        .emit();
    for (var r : ctx.resource()) {
      LocalPaths.report(
          sink, SqlText.unescapeString(r.stringLit().getText()), "create_function", where, fs());
    }
  }

  /**
   * EXECUTE IMMEDIATE ... USING: newer Spark releases splice the values into the statement text as SQL
   * literals before its substitution runs, so the string literals' values (concatenated, as adjacent
   * literals are) are checked like bound parameters. A value computed at run time cannot be seen here.
   */
  @Override
  public void enterExecuteImmediateUsing(SqlBaseParser.ExecuteImmediateUsingContext ctx) {
    StringBuilder values = new StringBuilder();
    stringLiterals(ctx, values);
    if (values.length() > 0)
      inspector.boundValue(values.toString(), where + ".using", scope.session, sink);
  }

  private static void stringLiterals(ParseTree node, StringBuilder out) {
    if (node instanceof SqlBaseParser.StringLitContext lit) {
      out.append(SqlText.unescapeString(lit.getText()));
      return;
    }
    for (int i = 0; i < node.getChildCount(); i++) stringLiterals(node.getChild(i), out);
  }

  @Override
  public void enterExecuteImmediate(SqlBaseParser.ExecuteImmediateContext ctx) {
    var param = ctx.executeImmediateQueryParam();
    if (param.stringLit() != null) {
      String query = SqlText.unescapeString(param.stringLit().getText());
      sink.fact(Fact.Kind.EXECUTE_IMMEDIATE, "literal")
          .put("query", query)
          .put("where", where)
          .emit();
      if (nesting < SqlInspector.MAX_IMMEDIATE_NESTING) {
        inspector.statement(
            query, "execute_immediate", where + ".execute_immediate", scope, sink, nesting + 1);
      } else {
        sink.unclassified("execute_immediate_too_deep", where, "nested EXECUTE IMMEDIATE");
      }
    } else {
      String variable = text.text(param);
      sink.fact(Fact.Kind.EXECUTE_IMMEDIATE, "variable")
          .put("variable", variable)
          .put("where", where)
          .emit();
      // The statement text lives in a session variable we cannot see.
      sink.unclassified("dynamic_sql", where, "EXECUTE IMMEDIATE " + variable);
    }
  }

  @Override
  public void enterSetCatalog(SqlBaseParser.SetCatalogContext ctx) {
    var ref = ctx.catalogIdentifierReference();
    String name;
    if (ref.stringLit() != null) {
      name = SqlText.unescapeString(ref.stringLit().getText());
    } else if (ref.errorCapturingIdentifier() != null) {
      name = SqlText.unquoteIdentifier(ref.errorCapturingIdentifier().identifier().getText());
    } else {
      name = literalIdentifier(ref.expression());
    }
    if (name == null) {
      sink.unclassified("hidden_identifier", where, "SET CATALOG " + text.text(ref));
      return;
    }
    scope.setCatalog(name);
    catalogOp("set_current_catalog", ref).put("name", name).put("catalog", name).emit();
  }

  // ---- script transforms, class names, data sources
  // ---------------------------------------------------------

  /** SELECT TRANSFORM / MAP / REDUCE ... USING 'script': a shell command on every executor (since 3.2, no Hive). */
  @Override
  public void enterTransformClause(SqlBaseParser.TransformClauseContext ctx) {
    String form = ctx.kind == null ? "transform" : ctx.kind.getText().toLowerCase(Locale.ROOT);
    sink.fact(Fact.Kind.USER_CODE, "script_transform")
        .put("form", form)
        .put("command", ctx.script == null ? null : SqlText.unescapeString(ctx.script.getText()))
        .put("where", where)
        .emit();
    if (ctx.recordWriter != null) className("record_writer", ctx.recordWriter);
    if (ctx.recordReader != null) className("record_reader", ctx.recordReader);
  }

  @Override
  public void enterRowFormatSerde(SqlBaseParser.RowFormatSerdeContext ctx) {
    if (ctx.name != null) className("serde", ctx.name);
  }

  @Override
  public void enterSetTableSerDe(SqlBaseParser.SetTableSerDeContext ctx) {
    if (ctx.stringLit() != null) className("serde", ctx.stringLit());
  }

  @Override
  public void enterTableFileFormat(SqlBaseParser.TableFileFormatContext ctx) {
    if (ctx.inFmt != null) className("input_format", ctx.inFmt);
    if (ctx.outFmt != null) className("output_format", ctx.outFmt);
  }

  @Override
  public void enterStorageHandler(SqlBaseParser.StorageHandlerContext ctx) {
    if (ctx.stringLit() != null) className("storage_handler", ctx.stringLit());
  }

  private void className(String role, SqlBaseParser.StringLitContext literal) {
    sink.fact(Fact.Kind.CLASS_NAME, role)
        .put("class_name", SqlText.unescapeString(literal.getText()))
        .put("where", where)
        .emit();
  }

  /** USING provider (CREATE TABLE, CREATE TEMPORARY VIEW, INSERT OVERWRITE DIRECTORY): a data source. */
  @Override
  public void enterTableProvider(SqlBaseParser.TableProviderContext ctx) {
    String subkind =
        ctx.getParent() instanceof SqlBaseParser.CreateTempViewUsingContext
            ? "read"
            : ctx.getParent() instanceof SqlBaseParser.InsertOverwriteDirContext
                ? "write"
                : "table_provider";
    sink.fact(Fact.Kind.DATA_SOURCE, subkind)
        .put("format", String.join(".", SqlInspector.parts(ctx.multipartIdentifier())))
        .put("source", "sql")
        .put("where", where)
        .emit();
  }

  /** CACHE TABLE / UNCACHE TABLE: the cache is the server's, so whose entry it is matters. */
  @Override
  public void enterCacheTable(SqlBaseParser.CacheTableContext ctx) {
    cacheOp("cache_table", ctx.identifierReference(), ctx);
  }

  @Override
  public void enterUncacheTable(SqlBaseParser.UncacheTableContext ctx) {
    cacheOp("uncache_table", ctx.identifierReference(), ctx);
  }

  private void cacheOp(
      String op, SqlBaseParser.IdentifierReferenceContext ident, ParserRuleContext ctx) {
    List<String> parts = names(ident);
    if (parts == null) return;
    String table = scope.resolve(parts).qualified();
    catalogOp(op, ctx)
        .put("table", table)
        .put("target", "table " + table)
        .put(
            "owned_by_session",
            op.equals("uncache_table") && scope.session.cachedBySession(table) ? "true" : null)
        .emit();
  }

  @Override
  public void enterCreateView(SqlBaseParser.CreateViewContext ctx) {
    if (ctx.GLOBAL() != null)
      catalogOp("create_global_temp_view", ctx)
          .put("name", text.text(ctx.identifierReference()))
          .emit();
  }

  @Override
  public void enterCreateTempViewUsing(SqlBaseParser.CreateTempViewUsingContext ctx) {
    String name = text.text(ctx.tableIdentifier());
    catalogOp(ctx.GLOBAL() != null ? "create_global_temp_view" : "create_temp_view", ctx)
        .put("name", name)
        .emit();
  }

  // ---- paths and options
  // ------------------------------------------------------------------------------------

  /** LOCATION of tables, CTAS, namespaces, partitions and ALTER ... SET LOCATION. */
  @Override
  public void enterLocationSpec(SqlBaseParser.LocationSpecContext ctx) {
    if (ctx.stringLit() != null) path(ctx.stringLit(), "location", false);
  }

  @Override
  public void enterInsertOverwriteDir(SqlBaseParser.InsertOverwriteDirContext ctx) {
    if (ctx.path != null) path(ctx.path, "insert_overwrite_directory", ctx.LOCAL() != null);
    else if (ctx.LOCAL() != null)
      LocalPaths.reportLocal(sink, "", "insert_overwrite_directory", where);
  }

  @Override
  public void enterInsertOverwriteHiveDir(SqlBaseParser.InsertOverwriteHiveDirContext ctx) {
    if (ctx.path != null) path(ctx.path, "insert_overwrite_directory", ctx.LOCAL() != null);
    // Without USING, Spark writes the directory with Hive's writer (InsertIntoDir, provider hive),
    // the
    // serde and formats of ROW FORMAT / STORED AS or Hive's defaults.
    sink.fact(Fact.Kind.DATA_SOURCE, "write")
        .put("format", "hive")
        .put("source", "sql")
        .put("where", where)
        .emit();
  }

  /**
   * REFRESH 'path' / REFRESH path: Spark invalidates what it cached under the path (RefreshResource), the
   * unquoted form being the rest of the text, trimmed, as Spark takes it.
   */
  @Override
  public void enterRefreshResource(SqlBaseParser.RefreshResourceContext ctx) {
    if (ctx.stringLit() != null) {
      path(ctx.stringLit(), "refresh_resource", false);
    } else {
      String path = text.remainder(ctx.REFRESH().getSymbol()).trim();
      LocalPaths.report(sink, path, "refresh_resource", where, fs());
    }
  }

  @Override
  public void enterLoadData(SqlBaseParser.LoadDataContext ctx) {
    if (ctx.path != null) path(ctx.path, "load_data", ctx.LOCAL() != null);
  }

  private void path(SqlBaseParser.StringLitContext literal, String context, boolean local) {
    String path = SqlText.unescapeString(literal.getText());
    if (local) LocalPaths.reportLocal(sink, path, context, where);
    else LocalPaths.report(sink, path, context, where, fs());
  }

  /**
   * Every property list: data source options ({@code OPTIONS}, {@code WITH (...)}) carry paths and Hadoop
   * settings; table, namespace and serde properties carry paths ({@code location}, Iceberg's
   * {@code write.data.path}).
   */
  @Override
  public void enterPropertyList(SqlBaseParser.PropertyListContext ctx) {
    boolean options = isOptions(ctx);
    for (var p : ctx.property()) {
      String key = propertyKey(p);
      String value = propertyValue(p);
      if (options) OptionFacts.option(sink, key, value, "options", where, fs());
      else OptionFacts.property(sink, key, value, "properties", where, fs());
    }
  }

  /** OPTIONS of CREATE TABLE in Spark 4: values are expressions, folded by the server. */
  @Override
  public void enterExpressionPropertyList(SqlBaseParser.ExpressionPropertyListContext ctx) {
    for (var p : ctx.expressionProperty()) {
      String key = propertyKey(p.propertyKey());
      String value = p.expression() == null ? "" : literalString(p.expression());
      if (value == null) {
        if (OptionFacts.isPathKey(key) || key.indexOf('.') > 0) {
          sink.unclassified(
              "computed_option", where, "OPTIONS " + key + " = " + text.text(p.expression()));
        }
        continue;
      }
      OptionFacts.option(sink, key, value, "options", where, fs());
    }
  }

  private static boolean isOptions(SqlBaseParser.PropertyListContext ctx) {
    ParserRuleContext parent = ctx.getParent();
    if (parent instanceof SqlBaseParser.OptionsClauseContext) return true;
    if (parent instanceof SqlBaseParser.CacheTableContext) return false;
    // The keyword just before the list says what it is: OPTIONS (...), TBLPROPERTIES (...),
    // DBPROPERTIES ...
    for (int i = 0; i < parent.getChildCount(); i++) {
      if (parent.getChild(i) == ctx && i > 0 && parent.getChild(i - 1) instanceof TerminalNode t) {
        return t.getSymbol().getType() == SqlBaseLexer.OPTIONS;
      }
    }
    return false;
  }

  /**
   * CALL catalog.system.procedure(...): Iceberg's and Hudi's procedures take locations and paths as string
   * arguments ({@code remove_orphan_files(location => 'file:/etc')}), by name or by position. Every string
   * that looks like a path is one; a computed string could be anything and is not guessed at.
   */
  @Override
  public void enterCall(SqlBaseParser.CallContext ctx) {
    for (var arg : ctx.functionArgument()) {
      var named = arg.namedArgumentExpression();
      String key = named == null ? "" : SqlText.unquoteIdentifier(named.key.getText());
      ParserRuleContext value = named == null ? arg.expression() : named.value;
      String context = "procedure_argument" + (key.isEmpty() ? "" : "." + key);
      String literal = literalString(value);
      if (literal != null) {
        if (OptionFacts.isPathKey(key) || LocalPaths.looksLikePath(literal)) {
          LocalPaths.report(sink, literal, context, where, fs());
        }
        continue;
      }
      pathLiterals(value, context);
      if (OptionFacts.isPathKey(key))
        sink.unclassified("computed_argument", where, "CALL argument " + text.text(arg));
    }
  }

  /** Every string literal inside {@code ctx} that looks like a path is reported as one. */
  private void pathLiterals(ParserRuleContext ctx, String context) {
    for (Token t : tokensOf(ctx)) {
      String s =
          t.getType() == SqlBaseLexer.STRING_LITERAL ? SqlText.unescapeString(t.getText()) : null;
      if (s != null && LocalPaths.looksLikePath(s))
        LocalPaths.report(sink, s, context, where, fs());
    }
  }

  /** The value of an expression that is only string literals, either quote (adjacent ones concatenate). */
  private static String literalString(ParserRuleContext expr) {
    return literals(expr, true);
  }

  /**
   * The concatenated value of an expression made only of string literals, else null; double-quoted ones
   * count only where they are strings, not identifiers.
   */
  private static String literals(ParserRuleContext expr, boolean doubleQuoted) {
    if (expr == null) return null;
    List<Token> tokens = tokensOf(expr);
    if (tokens.isEmpty()) return null;
    StringBuilder b = new StringBuilder();
    for (Token t : tokens) {
      boolean string =
          t.getType() == SqlBaseLexer.STRING_LITERAL
              || (doubleQuoted && t.getType() == SqlBaseLexer.DOUBLEQUOTED_STRING);
      if (!string) return null;
      b.append(SqlText.unescapeString(t.getText()));
    }
    return b.toString();
  }

  private String fs() {
    return scope.session.defaultFileSystem();
  }

  // ---- helpers
  // --------------------------------------------------------------------------------------------

  private FactSink.Builder catalogOp(String op, ParserRuleContext ctx) {
    return sink.fact(Fact.Kind.CATALOG_OP, op)
        .put("source", "sql")
        .put("where", where)
        .put("span_start", text.start(ctx))
        .put("span_end", text.end(ctx));
  }

  private FactSink.Builder tableFact(
      Fact.Kind kind, String subkind, TableRef ref, ParserRuleContext ident) {
    FactSink.Builder b = sink.fact(kind, subkind);
    ref.addTo(b);
    return b.put("written", text.text(ident))
        .put("span_start", text.start(ident))
        .put("span_end", text.end(ident))
        .put("source", "sql")
        .put("where", where);
  }

  /** The name parts, or null (with a fact) when IDENTIFIER(expr) hides them. */
  private List<String> names(SqlBaseParser.IdentifierReferenceContext ctx) {
    if (ctx.multipartIdentifier() != null) return SqlInspector.parts(ctx.multipartIdentifier());
    String literal = literalIdentifier(ctx.expression());
    if (literal != null) {
      List<String> parts = inspector.multipartIdentifier(literal, scope.session);
      if (parts != null) return parts;
    }
    // IDENTIFIER(:param) or IDENTIFIER(expr): bound or computed at run time.
    sink.unclassified(
        "hidden_identifier", where, "IDENTIFIER(" + text.text(ctx.expression()) + ")");
    return null;
  }

  /** IDENTIFIER('a.b'): the literal's value; anything else (parameters, expressions) is null. */
  private static String literalIdentifier(ParserRuleContext expr) {
    return literals(expr, false);
  }

  /**
   * A one-part name is a CTE if a WITH clause around it defines it: in a query's or DML's WITH, every CTE is
   * visible to the body; inside the WITH list, only the CTEs before the one being defined are (so
   * {@code WITH t AS (SELECT * FROM t)} reads the real table t, as in Spark without recursion).
   */
  private static boolean isCte(ParserRuleContext from, String name) {
    ParseTree child = from;
    for (ParserRuleContext p = from.getParent(); p != null; child = p, p = p.getParent()) {
      if (p instanceof SqlBaseParser.CtesContext ctes) {
        for (var nq : ctes.namedQuery()) {
          if (nq == child) break;
          if (cteName(nq).equalsIgnoreCase(name)) return true;
        }
      } else {
        SqlBaseParser.CtesContext ctes =
            p instanceof SqlBaseParser.QueryContext q
                ? q.ctes()
                : p instanceof SqlBaseParser.DmlStatementContext d ? d.ctes() : null;
        if (ctes != null && ctes != child) {
          for (var nq : ctes.namedQuery()) if (cteName(nq).equalsIgnoreCase(name)) return true;
        }
      }
    }
    return false;
  }

  private static String cteName(SqlBaseParser.NamedQueryContext nq) {
    return SqlText.unquoteIdentifier(nq.errorCapturingIdentifier().identifier().getText());
  }

  private String propertyKey(SqlBaseParser.PropertyContext p) {
    return propertyKey(p.propertyKey());
  }

  private static String propertyKey(SqlBaseParser.PropertyKeyContext key) {
    if (key.stringLit() != null) return SqlText.unescapeString(key.stringLit().getText());
    List<String> parts = new ArrayList<>();
    for (var id : key.errorCapturingIdentifier())
      parts.add(SqlText.unquoteIdentifier(id.identifier().getText()));
    return String.join(".", parts);
  }

  private String propertyValue(SqlBaseParser.PropertyContext p) {
    var v = p.propertyValue();
    if (v == null) return "";
    return v.stringLit() != null ? SqlText.unescapeString(v.stringLit().getText()) : text.text(v);
  }
}
