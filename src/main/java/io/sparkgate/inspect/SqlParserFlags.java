package io.sparkgate.inspect;

/**
 * The switches Spark's AbstractParser sets on the generated parser from session configuration
 * (parsers.scala in spark-sql-api 4.0): they change what parses, so they must match the backend's.
 * Defaults are Spark 4.0's: spark.sql.legacy.setopsPrecedence.enabled=false,
 * spark.sql.legacy.exponentLiteralAsDecimal.enabled=false, ansi.enforceReservedKeywords=false,
 * ansi.doubleQuotedIdentifiers=false (the last two only apply with ANSI mode on).
 */
public record SqlParserFlags(
    boolean legacySetOpsPrecedence,
    boolean legacyExponentLiteralAsDecimal,
    boolean enforceReservedKeywords,
    boolean doubleQuotedIdentifiers) {
  public static final SqlParserFlags SPARK_4_0_DEFAULTS =
      new SqlParserFlags(false, false, false, false);
}
