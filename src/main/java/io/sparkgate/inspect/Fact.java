package io.sparkgate.inspect;

import java.util.Map;
import java.util.Objects;

/**
 * One thing the inspector saw in a request: a kind, a subkind and a flat map of string attributes. Flat and
 * immutable so that policy conditions (and CEL, which has no recursion) can match on it without walking a
 * plan, and so the audit log can record it as is.
 *
 * <p>Attributes common to many kinds: {@code where} (the path in the request, e.g.
 * {@code plan.root.project.input.read}); {@code source} ({@code sql} or {@code dataframe}); spans are
 * {@code *_start}/{@code *_end} UTF-16 offsets into the {@code sql} attribute's original string, end exclusive,
 * so {@code sql.substring(start, end)} is the exact text.
 */
public record Fact(Kind kind, String subkind, Map<String, String> attrs) {

  /** What a fact is about; the attributes each kind carries are listed beside it. */
  public enum Kind {
    /** Per request: session_id, user_id, user_name, operation_id, client_type, method. */
    REQUEST,
    /**
     * Code that runs on the server. Subkind: python_udf, scala_udf, java_udf, udtf, python_data_source,
     * map_partitions, group_map, co_group_map, apply_in_pandas_with_state, transform_with_state,
     * foreach_writer, foreach_batch, streaming_listener, register_function, register_table_function,
     * register_data_source, ml_command, ml_model_load (MlCommand.read: path, class_name), ml_method_call,
     * execute_external_command, pipeline_command,
     * create_resource_profile, script_transform (SELECT TRANSFORM/MAP/REDUCE ... USING: form, command),
     * routine_language (CREATE FUNCTION ... LANGUAGE other than SQL). Attributes: udf_type
     * (python|scala|java), function_name, class_name, eval_type, payload_bytes, name, path, runner, command.
     */
    USER_CODE,
    /** A google.protobuf.Any extension: type_url, location (relation|command|expression|...). */
    EXTENSION,
    /** A SQL text (subkind: statement kind): sql (the whole text), length, origin (relation|command|...). */
    SQL,
    /**
     * An expression string (selectExpr, expr(), filter("..."), subkind expression): text, length, where. What
     * it calls and reads are facts of their own; this one lets the audit log show the text.
     */
    EXPRESSION,
    /** A table read: table (qualified), catalog, database, name, written (as written), option.*, span. */
    TABLE_READ,
    /** A table written or changed (subkind: the operation): same attributes as TABLE_READ. */
    TABLE_WRITE,
    /**
     * Time travel (subkind VERSION|TIMESTAMP): table (qualified), catalog, database, name, syntax
     * (e.g. FOR SYSTEM_VERSION AS OF), value, value_type (integer|string|expression), table_start/end,
     * clause_start/end, value_start/end, table_parts (name parts as written), alias (explicit alias, empty if
     * none) and alias_insert (where an alias would go, only without one); or from reader options
     * (syntax=option, option key).
     */
    TIME_TRAVEL,
    /**
     * A function named in SQL or a plan (subkind scalar, table_valued, generator (LATERAL VIEW), procedure):
     * name (last part, lower
     * case), qualified, namespace (empty, builtin, session, catalog), session_function, written.
     */
    FUNCTION_CALL,
    /**
     * key, value (subkind config_rpc, sql, pipeline; or option: a dotted data source option key, which Spark
     * copies into the read's or write's Hadoop configuration).
     */
    CONFIG_SET,
    /** key ({@code *} for a bare RESET). */
    CONFIG_UNSET,
    /** A config read through SQL: key for {@code SET key}, {@code *} for the listings {@code SET} and {@code SET -v}. */
    CONFIG_READ,
    /** SQL ADD JAR|FILE|ARCHIVE (subkind jar|file|archive): path (each path one fact). */
    ADD_RESOURCE,
    /** CREATE FUNCTION name AS 'class' [USING JAR 'x', ...]: name, class_name, resources. */
    CREATE_FUNCTION_USING,
    /** EXECUTE IMMEDIATE: query (a string literal) or variable. */
    EXECUTE_IMMEDIATE,
    /**
     * A data source (subkind read|write|stream_read|stream_write|table_provider|file_query|pipeline_sink|
     * pipeline_table): format (as written: a short name or a class), paths, option.*.
     */
    DATA_SOURCE,
    /**
     * A path (subkind file_scheme|absolute|relative|parent_ref|local_keyword|uri): path, scheme (what it
     * reaches: its own, else the server's default file system), context.
     */
    PATH,
    /**
     * A class the server would load by name (subkind serde, input_format, output_format, storage_handler,
     * record_writer, record_reader): class_name.
     */
    CLASS_NAME,
    /**
     * Catalog calls and statements (subkind: set_current_catalog, set_current_database, drop_table,
     * create_sql_function (name, temporary), create_temp_view, create_global_temp_view, ...).
     */
    CATALOG_OP,
    /** An uploaded artifact (subkind begin|batch|complete): name, prefix, size, crc, crc_ok, sha256. */
    ARTIFACT,
    /**
     * A Spark 4.1+ compressed plan that was inflated and inspected like a plain one (subkind: the codec,
     * zstd): op_type (relation|command), compressed_bytes, inflated_bytes, where. Informational: it lets the
     * audit log show that a plan arrived compressed; one that cannot be inflated is UNCLASSIFIED instead.
     */
    COMPRESSED_PLAN,
    /**
     * Something the inspector does not understand (subkind says what: unknown_case, unknown_field,
     * unparseable_sql, unknown_extension, plan_too_deep, sql_too_long, compressed_plan_too_large, ...).
     * A policy should refuse it.
     */
    UNCLASSIFIED
  }

  public Fact {
    Objects.requireNonNull(kind, "kind");
    subkind = subkind == null ? "" : subkind;
    // Sorted so that printed facts and audit lines are stable; immutable, and not copied when
    // already so.
    attrs = Attrs.copyOf(attrs);
  }

  /** An attribute, or null. */
  public String get(String key) {
    return attrs.get(key);
  }

  /**
   * Whether Spark compares this attribute's value exactly, case included, so a policy must too: the
   * {@code key} of CONFIG_SET, CONFIG_UNSET and CONFIG_READ. SQLConf and Hadoop's Configuration look keys up
   * as written ({@code Spark.Sql.Shuffle.Partitions} is a new key that no setting reads), so matching it
   * against an allowlist ignoring case would let an unreviewed key through as if it were a listed one. Not a
   * dotted data source option's key (subkind {@code option}): Spark reads data source options through a
   * CaseInsensitiveMap, whose iteration lower-cases the keys on their way into the Hadoop configuration, so
   * those compare ignoring case. Every other attribute compares ignoring case too (names Spark resolves so).
   */
  public boolean caseSensitive(String attr) {
    return attr.equals("key")
        && (kind == Kind.CONFIG_UNSET
            || kind == Kind.CONFIG_READ
            || (kind == Kind.CONFIG_SET && !subkind.equals("option")));
  }

  /** An integer attribute (spans), or -1 when absent. */
  public int intAttr(String key) {
    String v = attrs.get(key);
    return v == null ? -1 : Integer.parseInt(v);
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder(kind.name());
    if (!subkind.isEmpty()) b.append('[').append(subkind).append(']');
    attrs.forEach((k, v) -> b.append(' ').append(k).append('=').append(quote(v)));
    return b.toString();
  }

  private static String quote(String v) {
    String shown = v.length() > 200 ? v.substring(0, 200) + "...(" + v.length() + " chars)" : v;
    boolean plain = !shown.isEmpty() && shown.chars().allMatch(c -> c > ' ' && c != '"' && c < 127);
    return plain
        ? shown
        : '"' + shown.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + '"';
  }
}
