package io.sparkgate.inspect;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.antlr.v4.runtime.BailErrorStrategy;
import org.antlr.v4.runtime.BaseErrorListener;
import org.antlr.v4.runtime.CharStreams;
import org.antlr.v4.runtime.CommonTokenStream;
import org.antlr.v4.runtime.DefaultErrorStrategy;
import org.antlr.v4.runtime.ParserRuleContext;
import org.antlr.v4.runtime.RecognitionException;
import org.antlr.v4.runtime.Recognizer;
import org.antlr.v4.runtime.Token;
import org.antlr.v4.runtime.atn.ParserATNSimulator;
import org.antlr.v4.runtime.atn.PredictionContextCache;
import org.antlr.v4.runtime.atn.PredictionMode;
import org.antlr.v4.runtime.dfa.DFA;
import org.antlr.v4.runtime.misc.ParseCancellationException;
import org.apache.spark.sql.catalyst.parser.SqlBaseLexer;
import org.apache.spark.sql.catalyst.parser.SqlBaseParser;

/**
 * Runs Spark's generated parser the way AbstractParser.parse does (spark-sql-api 4.0 parsers.scala): an
 * upper-casing char stream, the four grammar flags, SLL with bail-out first and full LL on failure. Spark's
 * own Scala helpers (error strategies, PostProcessor) are not used, so scala-library is never needed.
 *
 * <p>Short texts are parsed once and their trees shared (see {@link #TREES}): the callers only read a tree,
 * and a tree is a function of the text, the rule and the flags alone.
 */
final class SqlParsing {
  /** A grammar entry point. */
  static final class Rule<T extends ParserRuleContext> {
    final String name;
    private final Function<SqlBaseParser, T> apply;

    private Rule(String name, Function<SqlBaseParser, T> apply) {
      this.name = name;
      this.apply = apply;
    }

    @Override
    public String toString() {
      return name;
    }
  }

  static final Rule<SqlBaseParser.CompoundOrSingleStatementContext> STATEMENT =
      new Rule<>("compoundOrSingleStatement", SqlBaseParser::compoundOrSingleStatement);
  static final Rule<SqlBaseParser.SingleExpressionContext> EXPRESSION =
      new Rule<>("singleExpression", SqlBaseParser::singleExpression);
  static final Rule<SqlBaseParser.SingleMultipartIdentifierContext> IDENTIFIER =
      new Rule<>("singleMultipartIdentifier", SqlBaseParser::singleMultipartIdentifier);

  /** Thrown for any text Spark would refuse to parse (or that we refuse to parse: too deep). */
  static final class SqlSyntaxException extends RuntimeException {
    SqlSyntaxException(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Texts up to this long are cached. Clients repeat statements (dashboards, JDBC tools, retries) and the
   * proxy reads a SET statement twice (secret redaction, then policy); parsing even {@code SELECT 1} with
   * Spark's grammar cost about 20 us of an event loop's time per call, a lookup well under 1 us.
   */
  static final int MAX_CACHED_CHARS = 4096;

  /**
   * The cache's budget, in tokens. Measured, a cached tree holds about 300 bytes of heap per token plus about
   * 3 KB for its lexer and text, so each tree weighs {@link #TREE_OVERHEAD_TOKENS} more than its tokens and
   * the cache stays near 15-20 MB whatever clients send. Caffeine's admission policy keeps a flood of one-off
   * statements from displacing the repeated ones.
   */
  static final long MAX_CACHED_TOKENS = 50_000;

  static final int TREE_OVERHEAD_TOKENS = 10;

  private record Key(Rule<?> rule, SqlParserFlags flags, int maxNesting, String text) {}

  /** A tree, or why there is none; weighed by its tokens. */
  private record Outcome(ParserRuleContext tree, SqlSyntaxException error, int weight) {}

  private static final Cache<Key, Outcome> TREES =
      Caffeine.newBuilder()
          .maximumWeight(MAX_CACHED_TOKENS)
          .weigher((Key k, Outcome o) -> o.weight())
          .build();

  /**
   * ANTLR's DFA cache is static and grows without bound (Spark flushes it past a threshold for the same
   * reason); we keep our own and drop it when it gets large, so hostile SQL cannot grow the heap forever.
   */
  private static final int MAX_DFA_STATES = 200_000;

  private record Caches(DFA[] dfa, PredictionContextCache contexts) {
    static Caches fresh(SqlBaseParser p) {
      var atn = p.getATN();
      DFA[] dfa = new DFA[atn.getNumberOfDecisions()];
      for (int i = 0; i < dfa.length; i++) dfa[i] = new DFA(atn.getDecisionState(i), i);
      return new Caches(dfa, new PredictionContextCache());
    }

    int states() {
      int n = 0;
      for (DFA d : dfa) n += d.states.size();
      return n;
    }
  }

  private static final AtomicReference<Caches> CACHES = new AtomicReference<>();

  /**
   * Empties the shared tree cache: a test that checks what is cached must not depend on what ran before it in
   * the same JVM (a full cache's admission policy may turn a new text away).
   */
  static void clearTrees() {
    TREES.invalidateAll();
    TREES.cleanUp();
  }

  /**
   * Counting the states walks every decision of the grammar (thousands), which cost more than parsing a short
   * statement; the size is checked every this many parses instead. What a parse can add is bounded by the
   * text's length, so the cache still cannot grow without bound.
   */
  private static final int CHECK_EVERY = 64;

  private static final AtomicInteger PARSES = new AtomicInteger();

  private final SqlParserFlags flags;
  private final int maxNesting;

  SqlParsing(SqlParserFlags flags, int maxNesting) {
    this.flags = flags;
    this.maxNesting = maxNesting;
  }

  /** The tree of {@code text} read as {@code rule}; the tree is shared and must not be modified. */
  <T extends ParserRuleContext> T parse(String text, Rule<T> rule) {
    if (text.length() > MAX_CACHED_CHARS) {
      return parseUncached(text, rule);
    }
    Outcome outcome = TREES.get(new Key(rule, flags, maxNesting, text), k -> outcome(text, rule));
    if (outcome.error() != null) throw outcome.error();
    @SuppressWarnings("unchecked") // keyed by rule, so the tree is of the rule's type
    T tree = (T) outcome.tree();
    return tree;
  }

  private Outcome outcome(String text, Rule<?> rule) {
    try {
      ParserRuleContext tree = parseUncached(text, rule);
      int tokens = tree.getStop() == null ? 1 : tree.getStop().getTokenIndex() + 1;
      return new Outcome(tree, null, TREE_OVERHEAD_TOKENS + tokens);
    } catch (SqlSyntaxException e) {
      return new Outcome(null, e, TREE_OVERHEAD_TOKENS);
    }
  }

  /** Texts this JVM has begun to lex (tests: a text over a bound must never get this far). */
  static int parses() {
    return PARSES.get();
  }

  private <T extends ParserRuleContext> T parseUncached(String text, Rule<T> rule) {
    boolean check = PARSES.incrementAndGet() % CHECK_EVERY == 0;
    SqlBaseLexer lexer = new SqlBaseLexer(new UpperCaseCharStream(CharStreams.fromString(text)));
    lexer.removeErrorListeners();
    lexer.addErrorListener(THROWING);
    CommonTokenStream tokens = new CommonTokenStream(lexer);
    try {
      tokens.fill();
    } catch (StackOverflowError e) {
      // Spark's lexer matches nested bracketed comments recursively: "/*" repeated thousands of
      // times.
      throw new SqlSyntaxException("comments nested too deep to read");
    }
    checkNesting(tokens);

    SqlBaseParser parser = new SqlBaseParser(tokens);
    Caches caches =
        CACHES.updateAndGet(
            c -> c == null || (check && c.states() > MAX_DFA_STATES) ? Caches.fresh(parser) : c);
    parser.setInterpreter(
        new ParserATNSimulator(parser, parser.getATN(), caches.dfa(), caches.contexts()));
    parser.removeErrorListeners();
    parser.addErrorListener(THROWING);
    parser.legacy_setops_precedence_enabled = flags.legacySetOpsPrecedence();
    parser.legacy_exponent_literal_as_decimal_enabled = flags.legacyExponentLiteralAsDecimal();
    parser.SQL_standard_keyword_behavior = flags.enforceReservedKeywords();
    parser.double_quoted_identifiers = flags.doubleQuotedIdentifiers();
    T tree;
    try {
      try {
        parser.setErrorHandler(new BailErrorStrategy());
        parser.getInterpreter().setPredictionMode(PredictionMode.SLL);
        tree = rule.apply.apply(parser);
      } catch (ParseCancellationException e) {
        tokens.seek(0);
        parser.reset();
        parser.setErrorHandler(new DefaultErrorStrategy());
        parser.getInterpreter().setPredictionMode(PredictionMode.LL);
        tree = rule.apply.apply(parser);
      }
    } catch (ParseCancellationException e) {
      throw new SqlSyntaxException(
          e.getCause() == null ? "syntax error" : String.valueOf(e.getCause()));
    } catch (StackOverflowError e) {
      // The pre-check bounds parentheses; other recursive rules (long operator chains) may still
      // recurse deep.
      throw new SqlSyntaxException("statement too complex to parse");
    }
    // Spark's UnclosedCommentProcessor refuses an unclosed /* everywhere but in SET key=value,
    // whose
    // value is the raw rest of the text (SET path=/data/*).
    if (lexer.has_unclosed_bracketed_comment && !isSetConfiguration(tree))
      throw new SqlSyntaxException("unclosed bracketed comment");
    return tree;
  }

  private static boolean isSetConfiguration(ParserRuleContext tree) {
    return tree instanceof SqlBaseParser.CompoundOrSingleStatementContext c
        && c.singleStatement() != null
        && c.singleStatement().setResetStatement() instanceof SqlBaseParser.SetConfigurationContext;
  }

  /** The generated parser recurses per nesting level: refuse deep nesting before it can overflow the stack. */
  private void checkNesting(CommonTokenStream tokens) {
    int depth = 0;
    for (Token t : tokens.getTokens()) {
      if (t.getType() == SqlBaseLexer.LEFT_PAREN) {
        if (++depth > maxNesting) throw new SqlSyntaxException("nesting deeper than " + maxNesting);
      } else if (t.getType() == SqlBaseLexer.RIGHT_PAREN) {
        depth--;
      }
    }
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
          throw new SqlSyntaxException("line " + line + ":" + col + " " + msg);
        }
      };
}
