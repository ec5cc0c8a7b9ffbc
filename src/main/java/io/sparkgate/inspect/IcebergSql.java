package io.sparkgate.inspect;

import io.sparkgate.inspect.grammar.iceberg.IcebergSqlExtensionsLexer;
import io.sparkgate.inspect.grammar.iceberg.IcebergSqlExtensionsParser;
import io.sparkgate.inspect.grammar.iceberg.IcebergSqlExtensionsParser.StatementContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.antlr.v4.runtime.BailErrorStrategy;
import org.antlr.v4.runtime.BaseErrorListener;
import org.antlr.v4.runtime.CharStreams;
import org.antlr.v4.runtime.CommonTokenStream;
import org.antlr.v4.runtime.DefaultErrorStrategy;
import org.antlr.v4.runtime.RecognitionException;
import org.antlr.v4.runtime.Recognizer;
import org.antlr.v4.runtime.atn.ATN;
import org.antlr.v4.runtime.atn.LexerATNSimulator;
import org.antlr.v4.runtime.atn.ParserATNSimulator;
import org.antlr.v4.runtime.atn.PredictionContextCache;
import org.antlr.v4.runtime.atn.PredictionMode;
import org.antlr.v4.runtime.dfa.DFA;
import org.antlr.v4.runtime.misc.ParseCancellationException;

/**
 * Iceberg's SQL extensions (partition fields, write order and distribution, identifier fields, branches and
 * tags, CALL) read with Iceberg's own grammar, generated at build time from the {@code .g4} in
 * iceberg-spark-extensions-3.5_2.12's sources jar, the way IcebergSparkSqlExtensionsParser reads them: only
 * text it recognises as its own, upper-cased for the lexer, SLL with bail-out first and full LL on failure.
 */
final class IcebergSql {
  static final String EXTENSION = "iceberg";

  /** Every labelled statement alternative of the grammar, and what it does; IcebergSqlTest keeps it complete. */
  static final Map<Class<? extends StatementContext>, ExtensionSql.Kind> STATEMENTS =
      Map.ofEntries(
          row(IcebergSqlExtensionsParser.CallContext.class, "call", "admin"),
          row(
              IcebergSqlExtensionsParser.AddPartitionFieldContext.class,
              "addPartitionField",
              "ddl"),
          row(
              IcebergSqlExtensionsParser.DropPartitionFieldContext.class,
              "dropPartitionField",
              "ddl"),
          row(
              IcebergSqlExtensionsParser.ReplacePartitionFieldContext.class,
              "replacePartitionField",
              "ddl"),
          row(
              IcebergSqlExtensionsParser.SetWriteDistributionAndOrderingContext.class,
              "setWriteDistributionAndOrdering",
              "ddl"),
          row(
              IcebergSqlExtensionsParser.SetIdentifierFieldsContext.class,
              "setIdentifierFields",
              "ddl"),
          row(
              IcebergSqlExtensionsParser.DropIdentifierFieldsContext.class,
              "dropIdentifierFields",
              "ddl"),
          row(
              IcebergSqlExtensionsParser.CreateOrReplaceBranchContext.class,
              "createOrReplaceBranch",
              "ddl"),
          row(
              IcebergSqlExtensionsParser.CreateOrReplaceTagContext.class,
              "createOrReplaceTag",
              "ddl"),
          row(IcebergSqlExtensionsParser.DropBranchContext.class, "dropBranch", "ddl"),
          row(IcebergSqlExtensionsParser.DropTagContext.class, "dropTag", "ddl"));

  /** What IcebergSparkSqlExtensionsParser.isIcebergCommand looks for after "alter table". */
  private static final List<String> ALTER_PHRASES =
      List.of(
          "add partition field",
          "drop partition field",
          "replace partition field",
          "write ordered by",
          "write locally ordered by",
          "write distributed by",
          "write unordered",
          "set identifier fields",
          "drop identifier fields",
          "create branch",
          "replace branch",
          "create tag",
          "replace tag",
          "drop branch",
          "drop tag");

  private IcebergSql() {}

  private static Map.Entry<Class<? extends StatementContext>, ExtensionSql.Kind> row(
      Class<? extends StatementContext> alternative, String name, String statementClass) {
    return Map.entry(alternative, new ExtensionSql.Kind(EXTENSION + "." + name, statementClass));
  }

  /** Reports the statement and returns true if Iceberg's parser would read it; otherwise emits nothing. */
  static boolean read(
      String sql,
      String origin,
      String where,
      SqlScope scope,
      SqlInspector inspector,
      FactSink sink) {
    if (!recognises(sql)) return false;
    IcebergSqlExtensionsParser.SingleStatementContext tree = parse(sql);
    if (tree == null) return false;
    StatementContext statement = tree.statement();
    ExtensionSql.Kind kind = STATEMENTS.get(statement.getClass());
    if (kind == null) return false;
    SqlText text = new SqlText(sql);
    FactSink.Builder fact = ExtensionSql.statement(sink, kind, sql, origin, where, EXTENSION);
    ref(statement, fact);
    fact.emit();
    var name =
        statement.getRuleContext(IcebergSqlExtensionsParser.MultipartIdentifierContext.class, 0);
    List<String> parts = parts(name);
    if (statement instanceof IcebergSqlExtensionsParser.CallContext call) {
      List<ProcedureCall.Argument> arguments = new ArrayList<>();
      for (var argument : call.callArgument())
        arguments.add(arguments(argument, text, sink, where, scope.session.defaultFileSystem()));
      ProcedureCall.report(parts, text.text(name), arguments, scope, inspector, sink, where);
      return true;
    }
    ExtensionSql.table(
            sink,
            Fact.Kind.TABLE_WRITE,
            kind.name(),
            scope.resolve(parts),
            text.text(name),
            text.start(name),
            text.end(name),
            where,
            EXTENSION)
        .emit();
    return true;
  }

  /** The branch or tag a statement names, and whether an existing one may be replaced. */
  private static void ref(StatementContext statement, FactSink.Builder fact) {
    if (statement instanceof IcebergSqlExtensionsParser.CreateOrReplaceBranchContext s) {
      var clause = s.createReplaceBranchClause();
      fact.put("branch", identifier(clause.identifier())).put("replace", clause.REPLACE() != null);
    } else if (statement instanceof IcebergSqlExtensionsParser.CreateOrReplaceTagContext s) {
      var clause = s.createReplaceTagClause();
      fact.put("tag", identifier(clause.identifier())).put("replace", clause.REPLACE() != null);
    } else if (statement instanceof IcebergSqlExtensionsParser.DropBranchContext s) {
      fact.put("branch", identifier(s.identifier()));
    } else if (statement instanceof IcebergSqlExtensionsParser.DropTagContext s) {
      fact.put("tag", identifier(s.identifier()));
    }
  }

  /** One argument of a CALL, checked for paths as ExtensionSql.argument says. */
  private static ProcedureCall.Argument arguments(
      IcebergSqlExtensionsParser.CallArgumentContext argument,
      SqlText text,
      FactSink sink,
      String where,
      String fs) {
    String key = "";
    if (argument instanceof IcebergSqlExtensionsParser.NamedArgumentContext named) {
      key = identifier(named.identifier());
    }
    var value = argument.getRuleContext(IcebergSqlExtensionsParser.ExpressionContext.class, 0);
    String literal =
        value.constant() instanceof IcebergSqlExtensionsParser.StringLiteralContext s
            ? string(s)
            : null;
    List<IcebergSqlExtensionsParser.ConstantContext> constants =
        value.stringMap() != null
            ? value.stringMap().constant()
            : value.stringArray() != null
                ? value.stringArray().constant()
                : List.of(value.constant());
    List<String> strings = new ArrayList<>();
    for (var c : constants) strings.add(string(c));
    ExtensionSql.argument(
        sink, key, literal, strings, value.stringMap() != null, text.text(argument), where, fs);
    return new ProcedureCall.Argument(key, literal, text.text(argument));
  }

  /** A string constant's value (adjacent literals are one string, as in Spark), or null for other constants. */
  private static String string(IcebergSqlExtensionsParser.ConstantContext constant) {
    if (constant instanceof IcebergSqlExtensionsParser.StringLiteralContext s) {
      StringBuilder b = new StringBuilder();
      for (var t : s.STRING()) b.append(SqlText.unescapeString(t.getText()));
      return b.toString();
    }
    if (constant instanceof IcebergSqlExtensionsParser.TypeConstructorContext t) {
      return SqlText.unescapeString(t.STRING().getText());
    }
    return null;
  }

  private static List<String> parts(IcebergSqlExtensionsParser.MultipartIdentifierContext name) {
    return name.parts.stream().map(IcebergSql::identifier).toList();
  }

  /** An identifier's value (Iceberg's post-processor removes backquotes and undoubles inner ones). */
  private static String identifier(IcebergSqlExtensionsParser.IdentifierContext id) {
    return SqlText.unquoteIdentifier(id.getText());
  }

  /** The tree, or null when Iceberg's grammar refuses the text (or it is too deep to parse). */
  static IcebergSqlExtensionsParser.SingleStatementContext parse(String sql) {
    if (ExtensionSql.commentNesting(sql) > ExtensionSql.MAX_COMMENT_NESTING) return null;
    try {
      var lexer =
          new IcebergSqlExtensionsLexer(new UpperCaseCharStream(CharStreams.fromString(sql)));
      boolean check = PARSES.incrementAndGet() % ExtensionSql.CHECK_EVERY == 0;
      Caches caches =
          CACHES.updateAndGet(
              c ->
                  c == null || (check && c.states() > ExtensionSql.MAX_DFA_STATES)
                      ? Caches.fresh()
                      : c);
      lexer.setInterpreter(
          new LexerATNSimulator(
              lexer, lexer.getATN(), caches.lexer(), new PredictionContextCache()));
      lexer.removeErrorListeners();
      lexer.addErrorListener(THROWING);
      CommonTokenStream tokens = new CommonTokenStream(lexer);
      tokens.fill();
      var parser = new IcebergSqlExtensionsParser(tokens);
      parser.setInterpreter(
          new ParserATNSimulator(parser, parser.getATN(), caches.parser(), caches.contexts()));
      parser.removeErrorListeners();
      parser.addErrorListener(THROWING);
      try {
        parser.setErrorHandler(new BailErrorStrategy());
        parser.getInterpreter().setPredictionMode(PredictionMode.SLL);
        return parser.singleStatement();
      } catch (ParseCancellationException e) {
        tokens.seek(0);
        parser.reset();
        parser.setErrorHandler(new DefaultErrorStrategy());
        parser.getInterpreter().setPredictionMode(PredictionMode.LL);
        return parser.singleStatement();
      }
    } catch (RuntimeException | StackOverflowError e) {
      return null;
    }
  }

  /**
   * Our own DFA caches rather than the generated classes' static ones (ExtensionSql.MAX_DFA_STATES). Without
   * a cache a statement took about 2 ms to parse.
   */
  private record Caches(DFA[] lexer, DFA[] parser, PredictionContextCache contexts) {
    static Caches fresh() {
      return new Caches(
          dfa(IcebergSqlExtensionsLexer._ATN),
          dfa(IcebergSqlExtensionsParser._ATN),
          new PredictionContextCache());
    }

    int states() {
      int n = 0;
      for (DFA d : lexer) n += d.states.size();
      for (DFA d : parser) n += d.states.size();
      return n;
    }
  }

  private static final AtomicInteger PARSES = new AtomicInteger();
  private static final AtomicReference<Caches> CACHES = new AtomicReference<>();

  private static DFA[] dfa(ATN atn) {
    DFA[] dfa = new DFA[atn.getNumberOfDecisions()];
    for (int i = 0; i < dfa.length; i++) dfa[i] = new DFA(atn.getDecisionState(i), i);
    return dfa;
  }

  private static final BaseErrorListener THROWING =
      new BaseErrorListener() {
        @Override
        public void syntaxError(
            Recognizer<?, ?> recognizer,
            Object offending,
            int line,
            int col,
            String msg,
            RecognitionException e) {
          throw new ParseCancellationException("line " + line + ":" + col + " " + msg);
        }
      };

  // ---- which statements Iceberg's parser takes
  // ------------------------------------------------------------

  /**
   * IcebergSparkSqlExtensionsParser.isIcebergCommand: Iceberg reads a statement with its grammar only when its
   * normalised text starts with "alter table" and names one of its clauses, or calls a procedure; the rest goes
   * to Spark's parser. For CALL this is wider than Iceberg's test (any {@code system.} procedure, not only the
   * names of its release), so a call is read rather than left unparseable.
   */
  static boolean recognises(String sql) {
    String n = normalize(sql);
    if (n.startsWith("call")) return n.contains("system.");
    if (!n.startsWith("alter table")) return false;
    for (String phrase : ALTER_PHRASES) if (n.contains(phrase)) return true;
    return false;
  }

  /**
   * Iceberg's normalisation (lower case; {@code --} comments ending in a newline, runs of whitespace and then
   * one-line block comments each replaced by a space; backquotes removed), written as linear scans: its
   * regular expressions take quadratic time on text full of unterminated comments.
   */
  static String normalize(String sql) {
    String s = stripLineComments(sql.toLowerCase(Locale.ROOT).trim());
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (ExtensionSql.isSpace(c)) {
        b.append(' ');
        while (i + 1 < s.length() && ExtensionSql.isSpace(s.charAt(i + 1))) i++;
      } else {
        b.append(c);
      }
    }
    return stripBlockComments(b.toString()).replace("`", "").trim();
  }

  /** {@code --.*?\n}: the comment must reach a '\n' before any other line terminator ('.' stops at them). */
  private static String stripLineComments(String s) {
    StringBuilder b = new StringBuilder(s.length());
    int i = 0;
    while (i < s.length()) {
      if (!s.startsWith("--", i)) {
        b.append(s.charAt(i++));
        continue;
      }
      int t = i + 2;
      while (t < s.length() && !isLineTerminator(s.charAt(t))) t++;
      if (t < s.length() && s.charAt(t) == '\n') {
        b.append(' ');
        i = t + 1;
      } else {
        // No match can start before t either: each would need the same terminator to be '\n'.
        b.append(s, i, t);
        i = t;
      }
    }
    return b.toString();
  }

  /** {@code /\*.*?\*\/} on the whitespace-collapsed text. */
  private static String stripBlockComments(String s) {
    StringBuilder b = new StringBuilder(s.length());
    int i = 0;
    while (i < s.length()) {
      if (!s.startsWith("/*", i)) {
        b.append(s.charAt(i++));
        continue;
      }
      int j = i + 2;
      while (j < s.length() && !s.startsWith("*/", j) && !isLineTerminator(s.charAt(j))) j++;
      if (s.startsWith("*/", j)) {
        b.append(' ');
        i = j + 2;
      } else {
        b.append(s, i, j);
        i = j;
      }
    }
    return b.toString();
  }

  /** What Java's {@code .} does not match without DOTALL. */
  private static boolean isLineTerminator(char c) {
    return c == '\n' || c == '\r' || c == '\u0085' || c == '\u2028' || c == '\u2029';
  }
}
