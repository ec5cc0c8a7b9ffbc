package io.sparkgate.inspect;

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
 */
final class SqlParsing {
  /** Thrown for any text Spark would refuse to parse (or that we refuse to parse: too deep). */
  static final class SqlSyntaxException extends RuntimeException {
    SqlSyntaxException(String message) {
      super(message, null, false, false);
    }
  }

  /** A parsed tree and its tokens. */
  record Parsed<T extends ParserRuleContext>(T tree, CommonTokenStream tokens) {}

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

  <T extends ParserRuleContext> Parsed<T> parse(String text, Function<SqlBaseParser, T> rule) {
    SqlBaseLexer lexer = new SqlBaseLexer(new UpperCaseCharStream(CharStreams.fromString(text)));
    lexer.removeErrorListeners();
    lexer.addErrorListener(THROWING);
    CommonTokenStream tokens = new CommonTokenStream(lexer);
    tokens.fill();
    if (lexer.has_unclosed_bracketed_comment) throw new SqlSyntaxException("unclosed bracketed comment");
    checkNesting(tokens);

    SqlBaseParser parser = new SqlBaseParser(tokens);
    boolean check = PARSES.incrementAndGet() % CHECK_EVERY == 0;
    Caches caches = CACHES.updateAndGet(
        c -> c == null || (check && c.states() > MAX_DFA_STATES) ? Caches.fresh(parser) : c);
    parser.setInterpreter(new ParserATNSimulator(parser, parser.getATN(), caches.dfa(), caches.contexts()));
    parser.removeErrorListeners();
    parser.addErrorListener(THROWING);
    parser.legacy_setops_precedence_enabled = flags.legacySetOpsPrecedence();
    parser.legacy_exponent_literal_as_decimal_enabled = flags.legacyExponentLiteralAsDecimal();
    parser.SQL_standard_keyword_behavior = flags.enforceReservedKeywords();
    parser.double_quoted_identifiers = flags.doubleQuotedIdentifiers();
    try {
      try {
        parser.setErrorHandler(new BailErrorStrategy());
        parser.getInterpreter().setPredictionMode(PredictionMode.SLL);
        return new Parsed<>(rule.apply(parser), tokens);
      } catch (ParseCancellationException e) {
        tokens.seek(0);
        parser.reset();
        parser.setErrorHandler(new DefaultErrorStrategy());
        parser.getInterpreter().setPredictionMode(PredictionMode.LL);
        return new Parsed<>(rule.apply(parser), tokens);
      }
    } catch (ParseCancellationException e) {
      throw new SqlSyntaxException(e.getCause() == null ? "syntax error" : String.valueOf(e.getCause()));
    } catch (StackOverflowError e) {
      // The pre-check bounds parentheses; other recursive rules (long operator chains) may still recurse deep.
      throw new SqlSyntaxException("statement too complex to parse");
    }
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
            Recognizer<?, ?> recognizer, Object offending, int line, int col, String msg, RecognitionException e) {
          throw new SqlSyntaxException("line " + line + ":" + col + " " + msg);
        }
      };
}
