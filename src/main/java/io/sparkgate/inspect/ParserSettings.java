package io.sparkgate.inspect;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The backend's settings that change how Spark reads a string before and while parsing it: variable
 * substitution (SparkSqlParser's pre-pass over every text its session parser reads) and the switches
 * AbstractParser sets on the generated parser. Sparkgate reads each string as the backend does with them; a
 * session may not change them, since every later string of that session would then be read differently.
 *
 * @param substitution {@code spark.sql.variable.substitute} (default true)
 * @param ansi {@code spark.sql.ansi.enabled}, which gates the two ANSI parser switches
 * @param enforceReservedKeywords {@code spark.sql.ansi.enforceReservedKeywords}
 * @param doubleQuotedIdentifiers {@code spark.sql.ansi.doubleQuotedIdentifiers}
 * @param legacySetOpsPrecedence {@code spark.sql.legacy.setopsPrecedence.enabled}
 * @param legacyExponentLiteralAsDecimal {@code spark.sql.legacy.exponentLiteralAsDecimal.enabled}
 * @param escapedStringLiterals {@code spark.sql.parser.escapedStringLiterals}: string literals are not
 *     unescaped. Not emulated: a backend with it on has every string refused (see {@link #unreadable}).
 */
public record ParserSettings(
    boolean substitution,
    boolean ansi,
    boolean enforceReservedKeywords,
    boolean doubleQuotedIdentifiers,
    boolean legacySetOpsPrecedence,
    boolean legacyExponentLiteralAsDecimal,
    boolean escapedStringLiterals) {

  static final String SUBSTITUTE = "spark.sql.variable.substitute";
  static final String ANSI = "spark.sql.ansi.enabled";
  static final String RESERVED = "spark.sql.ansi.enforceReservedKeywords";
  static final String DOUBLE_QUOTED = "spark.sql.ansi.doubleQuotedIdentifiers";
  static final String SET_OPS = "spark.sql.legacy.setopsPrecedence.enabled";
  static final String EXPONENT = "spark.sql.legacy.exponentLiteralAsDecimal.enabled";
  static final String ESCAPED = "spark.sql.parser.escapedStringLiterals";

  /**
   * Settings that change what Spark's parser builds without changing the functions, tables, paths or commands
   * Sparkgate finds (which columns a backquoted name selects, how joins and HAVING group, partition values'
   * types). They are not read, but a session still may not change them: the reading must be the backend's.
   */
  static final Set<String> OTHER_PARSER_KEYS =
      Set.of(
          "spark.sql.parser.quotedRegexColumnNames",
          "spark.sql.ansi.relationPrecedence",
          "spark.sql.legacy.parser.havingWithoutGroupByAsWhere",
          "spark.sql.legacy.keepPartitionSpecAsStringLiteral",
          "spark.sql.variable.substitute.depth");

  /** What the profiler asks the backend for. */
  public static final List<String> KEYS =
      List.of(SUBSTITUTE, ANSI, RESERVED, DOUBLE_QUOTED, SET_OPS, EXPONENT, ESCAPED);

  /**
   * Spark's substitution pattern (ConfigReader: {@code \$\{(?:(\w+?):)?(\S+?)\}}). Where it matches, Spark
   * replaces the text before parsing; where it does not, the text is parsed as sent.
   */
  static final Pattern SUBSTITUTION = Pattern.compile("\\$\\{(?:(\\w+?):)?(\\S+?)\\}");

  /** Spark 4.x's defaults, and what an unknown backend is assumed to do: substitution on. */
  public static final ParserSettings SPARK_4_DEFAULTS =
      new ParserSettings(true, true, false, false, false, false, false);

  /** Spark 3.5's: ANSI mode off. */
  static final ParserSettings SPARK_3_DEFAULTS =
      new ParserSettings(true, false, false, false, false, false, false);

  /**
   * The settings a backend of {@code sparkVersion} reports ({@code values}: key to value, absent when it did
   * not answer for a key); a key it did not answer keeps the version's default.
   */
  public static ParserSettings of(String sparkVersion, Map<String, String> values) {
    ParserSettings d =
        sparkVersion != null && sparkVersion.startsWith("3.") ? SPARK_3_DEFAULTS : SPARK_4_DEFAULTS;
    return new ParserSettings(
        bool(values, SUBSTITUTE, d.substitution),
        bool(values, ANSI, d.ansi),
        bool(values, RESERVED, d.enforceReservedKeywords),
        bool(values, DOUBLE_QUOTED, d.doubleQuotedIdentifiers),
        bool(values, SET_OPS, d.legacySetOpsPrecedence),
        bool(values, EXPONENT, d.legacyExponentLiteralAsDecimal),
        bool(values, ESCAPED, d.escapedStringLiterals));
  }

  /** Spark reads booleans with {@code toBoolean} after trimming: "true"/"false" in any case. */
  private static boolean bool(Map<String, String> values, String key, boolean otherwise) {
    String v = values.get(key);
    if (v == null) return otherwise;
    String t = v.strip().toLowerCase(Locale.ROOT);
    return t.equals("true") || (!t.equals("false") && otherwise);
  }

  /** The switches on the generated parser; the ANSI ones apply only in ANSI mode, as in SQLConf. */
  SqlParserFlags flags() {
    return new SqlParserFlags(
        legacySetOpsPrecedence,
        legacyExponentLiteralAsDecimal,
        ansi && enforceReservedKeywords,
        ansi && doubleQuotedIdentifiers);
  }

  /** True if Spark's substitution would change {@code text} before parsing it. */
  boolean substitutes(String text) {
    return substitution && text.indexOf("${") >= 0 && SUBSTITUTION.matcher(text).find();
  }

  /** The first reference substitution would replace, for the refusal's message. */
  static String firstReference(String text) {
    var m = SUBSTITUTION.matcher(text);
    return m.find() ? m.group() : "";
  }

  /** Why no string can be read as this backend reads it, or null: a setting Sparkgate does not emulate. */
  String unreadable() {
    return escapedStringLiterals ? ESCAPED + "=true" : null;
  }

  /**
   * True if setting {@code key} in a session changes how the backend reads that session's strings (Spark's
   * configuration keys are case-sensitive). ANSI mode counts only where it gates a parser switch the backend
   * turned on.
   */
  boolean isParserKey(String key) {
    if (key == null) return false;
    if (key.equals(ANSI)) return enforceReservedKeywords || doubleQuotedIdentifiers;
    return KEYS.contains(key) || OTHER_PARSER_KEYS.contains(key);
  }

  /**
   * Reports a session's attempt to set {@code key} if it is a parser setting: Sparkgate would no longer read
   * that session's strings as the backend does, so the change cannot be inspected.
   */
  static void checkChange(String key, SessionView session, String where, FactSink sink) {
    if (session.parser().isParserKey(key)) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "parser_setting")
          .put("where", where)
          .put("key", key)
          .put("detail", "changing " + key + " changes how the server parses this session's SQL")
          .emit();
    }
  }
}
