package io.sparkgate.inspect;

import java.util.Set;

/**
 * Statements only a session extension of the backend understands, read with that extension's own grammar
 * after Spark's refused them. The SQL fact's subkind names the grammar's statement alternative
 * ({@code iceberg.addPartitionField}) and carries {@code class} (read, write, ddl or admin) and
 * {@code extension}; the table it names is a TABLE_WRITE, a procedure a FUNCTION_CALL, and every string
 * argument is checked as a path. Text no loaded extension reads is left to the caller, who reports it as
 * unparseable, so it stays refused.
 *
 * <p>Iceberg's grammar only: Hudi publishes no {@code .g4} in any artifact served here (the bundle carries
 * ANTLR 4.9.3 output only, which antlr4-runtime 4.13.1 cannot load), so Hudi-only statements stay unparseable.
 */
final class ExtensionSql {
  static final String ICEBERG = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions";
  static final String HUDI = "org.apache.spark.sql.hudi.HoodieSparkSessionExtension";

  /** What one statement alternative does: the SQL fact's subkind and its class (read, write, ddl, admin). */
  record Kind(String name, String statementClass) {}

  private ExtensionSql() {}

  /**
   * Reports {@code sql} and returns true if the grammar of one of {@code extensions} (spark.sql.extensions
   * class names) reads it; otherwise emits nothing and returns false. Never throws.
   */
  static boolean read(String sql, Set<String> extensions, String origin, String where, SqlScope scope, FactSink sink) {
    try {
      return extensions.contains(ICEBERG) && IcebergSql.read(sql, origin, where, scope, sink);
    } catch (RuntimeException | StackOverflowError e) {
      // Whatever it emitted before failing, the caller adds unparseable_sql: refused all the same.
      return false;
    }
  }
}
