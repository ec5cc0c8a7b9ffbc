package io.sparkgate.inspect;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One of the SQL grammars in Hudi's Spark 3.5 bundle, as its release generated it, run on {@link Antlr49}:
 * {@link #COMMON} (HoodieSqlCommon.g4, what HoodieCommonSqlParser reads every statement with first:
 * compaction and CALL) and {@link #BASE} (HoodieSqlBase.g4, Hudi's copy of Spark's grammar that
 * HoodieSpark3_5ExtendedSqlParser reads index statements and time travel with). Text is read as Hudi's
 * parsers read it: upper-cased for the lexer (their UpperCaseCharStream; we upper-case code point by code point
 * up front, which keeps every offset, and take token text from the original string), SLL only, and the first
 * error, the lexer's too, means the grammar refuses the text.
 */
final class HudiGrammar {
  static final HudiGrammar COMMON = new HudiGrammar("HoodieSqlCommon");
  static final HudiGrammar BASE = new HudiGrammar("HoodieSqlBase");

  private static final String PACKAGE = "org.apache.hudi.spark.sql.parser.";

  private final String name;
  private volatile Generated generated;
  private final AtomicInteger parses = new AtomicInteger();
  private final AtomicReference<Caches> caches = new AtomicReference<>();

  private HudiGrammar(String name) {
    this.name = name;
  }

  /** The generated lexer and parser, their ATNs (deserialized by 4.9.3) and names, loaded on first use. */
  private record Generated(
      Constructor<?> lexer,
      Constructor<?> parser,
      Method singleStatement,
      Object lexerAtn,
      Object parserAtn,
      String[] ruleNames,
      String[] tokenNames) {}

  /** Our DFA caches (ExtensionSql.MAX_DFA_STATES), replaced when they grow large. */
  private record Caches(Object[] lexer, Object[] parser, Object contexts) {}

  /**
   * The tree of {@code singleStatement}, or null when the grammar refuses the text (or it nests too deep).
   * Nodes of the alternatives in {@code opaque} come without their children (GrammarTree.of).
   */
  GrammarTree parse(String sql, Set<String> opaque) {
    if (ExtensionSql.commentNesting(sql) > ExtensionSql.MAX_COMMENT_NESTING) return null;
    try {
      Antlr49 antlr = Antlr49.get();
      Generated g = generated(antlr);
      Caches c = caches(antlr, g);
      Object lexer = antlr.lexer(g.lexer(), upperCase(sql), g.lexerAtn(), c.lexer());
      Object parser =
          antlr.parser(g.parser(), antlr.tokens(lexer), g.parserAtn(), c.parser(), c.contexts());
      Object tree = Antlr49.call(g.singleStatement(), parser);
      return GrammarTree.of(antlr, tree, sql, g.ruleNames(), g.tokenNames(), opaque);
    } catch (RuntimeException | StackOverflowError e) {
      return null;
    }
  }

  private Generated generated(Antlr49 antlr) {
    Generated g = generated;
    if (g != null) return g;
    synchronized (this) {
      if (generated == null) {
        try {
          Class<?> lexer = Class.forName(PACKAGE + name + "Lexer", true, antlr.loader);
          Class<?> parser = Class.forName(PACKAGE + name + "Parser", true, antlr.loader);
          Object vocabulary = parser.getField("VOCABULARY").get(null);
          Class<?> vocabularyType = antlr.type("Vocabulary");
          int max = (Integer) vocabularyType.getMethod("getMaxTokenType").invoke(vocabulary);
          String[] tokenNames = new String[max + 1];
          for (int t = 0; t <= max; t++) {
            Object symbolic =
                vocabularyType.getMethod("getSymbolicName", int.class).invoke(vocabulary, t);
            Object literal =
                vocabularyType.getMethod("getLiteralName", int.class).invoke(vocabulary, t);
            tokenNames[t] =
                symbolic != null
                    ? (String) symbolic
                    : literal != null ? (String) literal : "<" + t + ">";
          }
          Class<?> charStream = antlr.type("CharStream");
          Class<?> tokenStream = antlr.type("TokenStream");
          generated =
              new Generated(
                  lexer.getConstructor(charStream),
                  parser.getConstructor(tokenStream),
                  parser.getMethod("singleStatement"),
                  lexer.getField("_ATN").get(null),
                  parser.getField("_ATN").get(null),
                  (String[]) parser.getField("ruleNames").get(null),
                  tokenNames);
        } catch (ReflectiveOperationException | LinkageError e) {
          throw new IllegalStateException(
              name + "'s generated grammar not found under " + Antlr49.PREFIX, e);
        }
      }
      return generated;
    }
  }

  private Caches caches(Antlr49 antlr, Generated g) {
    boolean check = parses.incrementAndGet() % ExtensionSql.CHECK_EVERY == 0;
    return caches.updateAndGet(
        c ->
            c == null
                    || (check
                        && antlr.states(c.lexer()) + antlr.states(c.parser())
                            > ExtensionSql.MAX_DFA_STATES)
                ? new Caches(
                    antlr.dfa(g.lexerAtn()), antlr.dfa(g.parserAtn()), antlr.contextCache())
                : c);
  }

  /**
   * What Hudi's UpperCaseCharStream shows the lexer: each code point upper-cased on its own
   * (Character.toUpperCase), so the text keeps its length in code points, which token offsets count.
   */
  static String upperCase(String sql) {
    StringBuilder b = new StringBuilder(sql.length());
    sql.codePoints().forEach(cp -> b.appendCodePoint(Character.toUpperCase(cp)));
    return b.toString();
  }
}
