package io.sparkgate.inspect;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What an option or property map can carry besides plain settings: paths (a data source's {@code path}, a
 * table's {@code location}, Iceberg's {@code write.data.path}, a catalog's {@code warehouse}) and Hadoop
 * settings. Spark copies every data source option into the Hadoop configuration of the read or write, so a
 * dotted key ({@code fs.file.impl}, {@code fs.viewfs.mounttable...}, {@code parquet.read.support.class}) is a
 * configuration change as much as {@code SET} is, and is reported as one.
 */
final class OptionFacts {
  private OptionFacts() {}

  /**
   * A data source option ({@code OPTIONS}, {@code WITH (...)}, a reader's or writer's options). Its key is
   * reported as written and compared ignoring case ({@link Fact#caseSensitive} is false for subkind
   * {@code option}), unlike a session setting's: Spark keeps options in a CaseInsensitiveMap, which sources
   * read ignoring case and whose iteration lower-cases the keys it copies into the Hadoop configuration.
   */
  static void option(
      FactSink sink, String key, String value, String context, String where, String defaultFs) {
    property(sink, key, value, context, where, defaultFs);
    if (key.indexOf('.') > 0) {
      sink.fact(Fact.Kind.CONFIG_SET, "option")
          .put("key", key)
          .put("value", value)
          .put("context", context)
          .put("where", where)
          .emit();
    }
  }

  /** A table, namespace or serde property: only its paths matter here. */
  static void property(
      FactSink sink, String key, String value, String context, String where, String defaultFs) {
    if (value == null || !isPathKey(key)) return;
    for (String path : paths(key, value))
      LocalPaths.report(sink, path, context + "." + key, where, defaultFs);
  }

  /**
   * Options and properties whose value Spark or a connector opens as a file or URL (through Hadoop's
   * FileSystem, so any scheme), lower case. Read off Spark 4.0's readers and writers and the connectors'
   * documented options; the suffixes in {@link #isPathKey} catch most, and the rest would be missed without
   * this list. Not paths: {@code pathGlobFilter} and {@code recursiveFileLookup} (filters over the path
   * given), {@code avroSchema} (the schema itself), {@code rowTag}.
   */
  static final java.util.Set<String> PATH_OPTIONS =
      java.util.Set.of(
          // File sources (DataSource, PartitioningAwareFileIndex): where to read and write.
          "path",
          "paths",
          "basepath",
          // Streaming: the query's checkpoint; where cleanSource=archive moves the files it read.
          "checkpointlocation",
          "sourcearchivedir",
          // Avro (AvroOptions): a schema file, opened with FileSystem.open, on the driver.
          "avroschemaurl",
          // Hive's Avro serde: the same, as a table property (AvroSerdeUtils.SCHEMA_URL).
          "avro.schema.url",
          // XML (XmlOptions): an XSD file rows are validated against.
          "rowvalidationxsdpath",
          // CSV and JSON on Databricks: where bad records are written (Spark ignores it).
          "badrecordspath",
          // JDBC with Kerberos (JDBCOptions): a keytab file.
          "keytab",
          // Tables (V2 options and properties), Iceberg's table properties and catalog settings.
          "location",
          "write.data.path",
          "write.metadata.path",
          "write.object-storage.path",
          "write.folder-storage.path",
          "warehouse",
          "uri",
          // Hudi: the table's base path, a bootstrap source, the lock provider's directory.
          "hoodie.base.path",
          "hoodie.bootstrap.base.path",
          "hoodie.write.lock.filesystem.path");

  /**
   * A key in {@link #PATH_OPTIONS}, or one whose name says it holds a path (a connector's own
   * {@code ...path}, {@code ...location}, {@code ...dir}): refusing a value that is not a path costs less
   * than missing one that is.
   */
  static boolean isPathKey(String key) {
    String k = key.toLowerCase(Locale.ROOT);
    return PATH_OPTIONS.contains(k)
        || k.endsWith("path")
        || k.endsWith("location")
        || k.endsWith("dir")
        || k.endsWith("directory")
        || k.endsWith("folder")
        || k.endsWith(".warehouse")
        || k.endsWith(".uri")
        || k.endsWith("schemaurl")
        || k.endsWith(".schema.url");
  }

  /**
   * The {@code paths} option holds a JSON array (how DataFrameReader passes several); read its strings, and
   * for anything else the value is one path.
   */
  private static List<String> paths(String key, String value) {
    String v = value.strip();
    if (!key.equalsIgnoreCase("paths") || !v.startsWith("[")) return List.of(value);
    List<String> out = new ArrayList<>();
    int i = 0;
    while ((i = v.indexOf('"', i)) >= 0) {
      StringBuilder b = new StringBuilder();
      int j = i + 1;
      for (; j < v.length() && v.charAt(j) != '"'; j++) {
        char c = v.charAt(j);
        if (c == '\\' && j + 1 < v.length()) c = v.charAt(++j);
        b.append(c);
      }
      out.add(b.toString());
      i = j + 1;
    }
    // Not a well-formed array: the whole text, so that nothing is left unchecked.
    return out.isEmpty() ? List.of(value) : out;
  }
}
