package io.sparkgate.inspect;

import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code format.`path`}: with spark.sql.runSQLOnFiles (on by default) Spark's ResolveSQLOnFile reads a table
 * name of two parts whose first part is a data source as a file query on the path in the second, in SQL and in
 * {@code spark.table(...)} alike. Reported for the data sources Spark names and for class names (a dot in the
 * first part), so the format and the path meet the same rules as a reader's. A database that happens to share
 * a data source's name is reported too: the cautious reading.
 */
final class FileQueries {
  /** Short names of data sources built into Spark 4.0 and the lakehouse formats. */
  private static final Set<String> SOURCES =
      Set.of(
          "parquet",
          "orc",
          "json",
          "csv",
          "text",
          "avro",
          "binaryfile",
          "xml",
          "jdbc",
          "kafka",
          "libsvm",
          "image",
          "noop",
          "delta",
          "hudi",
          "iceberg");

  private FileQueries() {}

  static void report(
      FactSink sink, List<String> parts, String source, String where, String defaultFs) {
    if (parts.size() != 2) return;
    String format = parts.get(0);
    if (!SOURCES.contains(format.toLowerCase(Locale.ROOT)) && format.indexOf('.') < 0) return;
    sink.fact(Fact.Kind.DATA_SOURCE, "file_query")
        .put("format", format)
        .put("paths", parts.get(1))
        .put("source", source)
        .put("where", where)
        .emit();
    LocalPaths.report(sink, parts.get(1), "file_query", where, defaultFs);
  }
}
