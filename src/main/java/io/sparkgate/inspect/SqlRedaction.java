package io.sparkgate.inspect;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.Set;
import org.antlr.v4.runtime.CharStreams;
import org.antlr.v4.runtime.Token;
import org.apache.spark.sql.catalyst.parser.SqlBaseLexer;

/**
 * SQL text with its literals (strings and numbers) replaced by {@code ?}, for audit records: literals can hold
 * personal data. Tokenized with Spark's own lexer, so quoting and comments are read as the server reads them;
 * comments are dropped too (they can hold anything).
 */
public final class SqlRedaction {
  private static final Set<Integer> LITERALS =
      Set.of(
          SqlBaseLexer.STRING_LITERAL,
          SqlBaseLexer.DOUBLEQUOTED_STRING,
          SqlBaseLexer.INTEGER_VALUE,
          SqlBaseLexer.BIGINT_LITERAL,
          SqlBaseLexer.SMALLINT_LITERAL,
          SqlBaseLexer.TINYINT_LITERAL,
          SqlBaseLexer.DECIMAL_VALUE,
          SqlBaseLexer.DOUBLE_LITERAL,
          SqlBaseLexer.FLOAT_LITERAL,
          SqlBaseLexer.EXPONENT_VALUE,
          SqlBaseLexer.BIGDECIMAL_LITERAL);

  /**
   * Shared servers see the same statements over and over (dashboards, ORMs, notebooks re-run), and every one
   * lands in an audit record: lexing it each time was an eighth of the audit writer's time (profiled). Only
   * short texts are remembered, weighed by length, so the memo stays within a few megabytes (the inspector's
   * statement and parse-tree caches hold the same texts).
   */
  static final int MAX_MEMO_CHARS = 4096;

  private static final Cache<String, String> MEMO =
      Caffeine.newBuilder()
          .maximumWeight(2_000_000)
          .weigher((String sql, String redacted) -> sql.length() + redacted.length())
          .executor(Runnable::run)
          .build();

  private SqlRedaction() {}

  /** The text with literals replaced by {@code ?} and comments dropped. */
  public static String redactLiterals(String sql) {
    return sql.length() > MAX_MEMO_CHARS ? lex(sql) : MEMO.get(sql, SqlRedaction::lex);
  }

  private static String lex(String sql) {
    SqlBaseLexer lexer = new SqlBaseLexer(new UpperCaseCharStream(CharStreams.fromString(sql)));
    lexer.removeErrorListeners();
    StringBuilder out = new StringBuilder(sql.length());
    int last = 0;
    try {
      for (Token t = lexer.nextToken(); t.getType() != Token.EOF; t = lexer.nextToken()) {
        boolean literal = LITERALS.contains(t.getType());
        boolean comment =
            t.getType() == SqlBaseLexer.SIMPLE_COMMENT
                || t.getType() == SqlBaseLexer.BRACKETED_COMMENT;
        if (!literal && !comment) continue;
        out.append(sql, last, t.getStartIndex()).append(literal ? "?" : " ");
        last = t.getStopIndex() + 1;
      }
    } catch (RuntimeException e) {
      return "<unreadable SQL: " + sql.length() + " chars>";
    }
    return out.append(sql.substring(Math.min(last, sql.length()))).toString();
  }
}
