package io.sparkgate.inspect;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.sparkgate.proto.spark.JavaUDF;
import io.sparkgate.proto.spark.PipelineAnalysisContext;
import io.sparkgate.proto.spark.PythonUDF;
import io.sparkgate.proto.spark.ScalarScalaUDF;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What each kind of plan message means, keyed by protobuf message name. Messages not named here are walked
 * for their children only (Coverage decides which oneof cases that is acceptable for).
 */
final class Detectors {
  /** Reader options that select an older version of a table (Spark, Delta, Iceberg, Hudi). */
  static final Set<String> TIME_TRAVEL_OPTIONS =
      Set.of(
          "timestampasof",
          "versionasof",
          "snapshot-id",
          "as-of-timestamp",
          "branch",
          "tag",
          "start-snapshot-id",
          "end-snapshot-id",
          "start-timestamp",
          "end-timestamp",
          "as.of.instant");

  /**
   * What a Spark Declarative Pipelines client (4.1+) puts in UserContext.extensions while a flow function
   * runs; the one extension the inspector reads (its fields, walked, are what the server gets).
   */
  static final String PIPELINE_ANALYSIS_CONTEXT =
      "type.googleapis.com/" + PipelineAnalysisContext.getDescriptor().getFullName();

  private static final java.util.regex.Pattern PLAIN_NAME =
      java.util.regex.Pattern.compile("[A-Za-z0-9_]+");

  private final InspectorConfig config;
  private final SqlInspector sql;
  private final FactSink sink;

  Detectors(InspectorConfig config, SqlInspector sql, FactSink sink) {
    this.config = config;
    this.sql = sql;
    this.sink = sink;
  }

  /**
   * Facts about one message. Dispatches on the frame's type and asks for the message only for types that have
   * something to report, and for the path only when it reports. False if nothing here looks at messages of
   * this type, whatever they hold.
   */
  boolean detect(Frame frame, SessionView session, PlanWalker walker) {
    Shape shape = frame.shape();
    if (shape.pathFields) genericPaths(frame.message(), frame.path(), session.defaultFileSystem());
    boolean typed = true;
    switch (shape.name) {
      case "SQL" -> {
        String q = frame.str("query");
        if (q != null) sql.statement(q, "relation", frame.path(), session, sink);
      }
      case "SqlCommand" -> {
        String q = frame.str("sql");
        if (q != null) sql.statement(q, "command", frame.path(), session, sink);
      }
      case "StructField" -> fieldMetadata(frame, session);
      case "Literal" -> {
        if (isSqlParameter(frame)) {
          String value = frame.str("string");
          if (value != null) sql.boundValue(value, frame.path(), session, sink);
        }
      }
      // Type and schema strings the planner hands the session parser (parseDatatypeString).
      case "Cast" -> typeString(frame.str("type_str"), frame, session);
      case "Unparsed" -> typeString(frame.str("data_type_string"), frame, session);
      case "LocalRelation" -> typeString(frame.str("schema"), frame, session);
      case "DDLParse" -> typeString(frame.str("ddl_string"), frame, session);
      case "ExpressionString" -> {
        String e = frame.str("expression");
        if (e != null) sql.expression(e, frame.path(), session, sink);
      }
      case "NamedTable", "RelationChanges" -> namedTable(frame.message(), frame, session);
      case "DataSource" -> dataSource(frame.message(), frame);
      case "WriteOperation" -> writeOperation(frame.message(), session, frame.path());
      case "WriteOperationV2" -> {
        Message m = frame.message();
        table(
            Fact.Kind.TABLE_WRITE,
            "write_v2_" + Proto.str(m, "mode").toLowerCase(Locale.ROOT),
            Proto.str(m, "table_name"),
            Proto.stringMap(m, "options"),
            session,
            frame.path());
      }
      case "WriteStreamOperationStart" -> writeStream(frame.message(), session, frame.path());
      case "MergeIntoTableCommand" ->
          table(
              Fact.Kind.TABLE_WRITE,
              "merge",
              frame.str("target_table_name"),
              Map.of(),
              session,
              frame.path());
      case "CreateDataFrameViewCommand" -> {
        // The view's name is read by the session parser (parseTableIdentifier).
        String name = frame.str("name");
        if (name != null) sql.sessionIdentifier(name, frame.path(), session, sink);
        sink.fact(Fact.Kind.CATALOG_OP, "create_temp_view")
            .put("name", frame.str("name"))
            .put("global", frame.str("is_global"))
            .put("where", frame.path())
            .emit();
      }
      case "Catalog" -> catalog(frame.message(), frame.path(), session);
      case "Persist", "Unpersist" -> cachedPlan(frame, session);
      case "PythonUDF", "ScalarScalaUDF", "JavaUDF", "PythonUDTF", "PythonDataSource" ->
          userCode(frame);
      case "StreamingQueryListenerCommand" -> {
        int payload = Proto.bytesSize(frame.message(), "listener_payload");
        if (payload > 0) {
          sink.fact(Fact.Kind.USER_CODE, "streaming_listener")
              .put("udf_type", "scala")
              .put("payload_bytes", payload)
              .put("where", frame.path())
              .emit();
        } else if ("add_listener".equals(frame.field())
            && !Proto.has(frame.message(), "python_listener_payload")) {
          // A listener to add with no listener in it: the server would act (deserialize an empty
          // payload) on something the inspector cannot read. removeListener carries only the id.
          sink.fact(Fact.Kind.UNCLASSIFIED, "empty_message")
              .put("message", frame.type())
              .put("where", frame.path())
              .emit();
        }
      }
      case "MlCommand" -> mlCommand(frame);
      case "MlOperator" -> {
        Message m = frame.message();
        sink.fact(Fact.Kind.USER_CODE, "ml_command")
            .put("class_name", Proto.str(m, "name"))
            .put("uid", Proto.str(m, "uid"))
            .put("operator_type", Proto.str(m, "type"))
            .put("where", frame.path())
            .emit();
      }
      case "Method" -> {
        if (frame.parent() != null && frame.parent().typeName().equals("Fetch")) {
          sink.fact(Fact.Kind.USER_CODE, "ml_method_call")
              .put("method", frame.str("method"))
              .put("where", frame.path())
              .emit();
        }
      }
      case "ExecuteExternalCommand" ->
          sink.fact(Fact.Kind.USER_CODE, "execute_external_command")
              .put("runner", frame.str("runner"))
              .put("command", frame.str("command"))
              .put("where", frame.path())
              .emit();
      case "PipelineCommand" ->
          sink.fact(Fact.Kind.USER_CODE, "pipeline_command")
              .put("op", Proto.oneofCase(frame.message(), "command_type"))
              .put("where", frame.path())
              .emit();
      case "Command" -> {
        if ("create_resource_profile_command"
            .equals(Proto.oneofCase(frame.message(), "command_type"))) {
          sink.fact(Fact.Kind.USER_CODE, "create_resource_profile")
              .put("where", frame.path())
              .emit();
        }
      }
      // Spark's planner reads a CallFunction's name, and an UnresolvedFunction's marked
      // user-defined, as a multi-part identifier; any other UnresolvedFunction name is one part,
      // dots and all.
      case "UnresolvedFunction" -> {
        // A plain name reads the same either way; only for another is the flag read (a parse of the
        // message).
        String name = frame.str("function_name");
        boolean plain = name != null && PLAIN_NAME.matcher(name).matches();
        function(
            name,
            "scalar",
            frame,
            session,
            !plain && "true".equals(frame.str("is_user_defined_function")));
      }
      case "CallFunction" -> function(frame.str("function_name"), "scalar", frame, session, true);
      case "UnresolvedTableValuedFunction" ->
          function(frame.str("function_name"), "table_valued", frame, session, true);
      case "CompressedOperation" ->
          Compressed.inspect(frame.message(), frame, config, sink, walker);
      case "Set" -> configSet(frame, session);
      case "Unset" -> {
        if (isConfigOperation(frame)) {
          for (String k : Proto.strings(frame.message(), "keys")) {
            sink.fact(Fact.Kind.CONFIG_UNSET, "config_rpc")
                .put("key", k)
                .put("where", frame.path())
                .emit();
          }
        }
      }
      default -> typed = false;
    }
    if (shape.pipelineCommand) pipeline(frame, session);
    return typed || shape.pathFields || shape.pipelineCommand;
  }

  void extension(Any any, Frame frame, PlanWalker walker) {
    String location =
        frame.parent() == null ? "" : frame.parent().typeName().toLowerCase(Locale.ROOT);
    String where = frame.path();
    sink.fact(Fact.Kind.EXTENSION, location)
        .put("type_url", any.getTypeUrl())
        .put("location", location)
        .put("where", where)
        .put("bytes", any.getValue().size())
        .emit();
    if (location.equals("usercontext")
        && any.getTypeUrl().equals(PIPELINE_ANALYSIS_CONTEXT)
        && pipelineAnalysisContext(any, frame, walker)) {
      return;
    }
    if (!config.knownExtensionTypeUrls().contains(any.getTypeUrl())) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_extension")
          .put("type_url", any.getTypeUrl())
          .put("location", location)
          .put("where", where)
          .emit();
    }
  }

  /**
   * A PipelineAnalysisContext, unpacked and walked like any message (its own extensions are then reported as
   * unknown). False if it does not parse: reported as an unknown extension, which a policy refuses.
   */
  private boolean pipelineAnalysisContext(Any any, Frame frame, PlanWalker walker) {
    PipelineAnalysisContext context;
    try {
      context = PipelineAnalysisContext.parseFrom(any.getValue());
    } catch (InvalidProtocolBufferException e) {
      return false;
    }
    walker.push(new Frame(context, frame, "(pipeline_analysis_context)", frame.depth() + 1));
    return true;
  }

  /**
   * ML commands that carry nothing and touch only the calling session's own ML cache (Spark keeps one per
   * session). PySpark 4.x sends clean_cache from an exit hook of every process that ends without stopping
   * its session; as user code that was a refusal in the audit log for every such exit.
   */
  private static final Set<String> OWN_ML_CACHE = Set.of("clean_cache", "get_cache_info");

  /**
   * Loading a saved model or pipeline (MlCommand.read) deserializes whatever the saved metadata names, code
   * included, so it gets its own subkind; the other ML operations stay ml_command, but for the session's own
   * cache housekeeping ({@link #OWN_ML_CACHE}), which yields no fact.
   */
  private void mlCommand(Frame frame) {
    Message m = frame.message();
    String op = Proto.oneofCase(m, "command");
    if (op != null && OWN_ML_CACHE.contains(op)) {
      return;
    }
    if ("read".equals(op)) {
      Message read = (Message) m.getField(Proto.field(m, "read"));
      Message operator =
          Proto.has(read, "operator")
              ? (Message) read.getField(Proto.field(read, "operator"))
              : null;
      sink.fact(Fact.Kind.USER_CODE, "ml_model_load")
          .put("op", op)
          .put("path", Proto.str(read, "path"))
          .put("class_name", operator == null ? null : Proto.str(operator, "name"))
          .put("where", frame.path())
          .emit();
      return;
    }
    sink.fact(Fact.Kind.USER_CODE, "ml_command").put("op", op).put("where", frame.path()).emit();
  }

  /**
   * Spark Declarative Pipelines (PipelineCommand and its messages): the settings, paths, sinks and SQL a
   * pipeline hands the server, as the same facts their DataFrame and SQL equivalents give, so the same
   * allowlists apply. Options and table properties are read by genericPaths like any others.
   */
  private void pipeline(Frame frame, SessionView session) {
    Message m = frame.message();
    String where = frame.path();
    String defaultFs = session.defaultFileSystem();
    Proto.stringMap(m, "sql_conf")
        .forEach(
            (k, v) -> {
              ParserSettings.checkChange(k, session, where, sink);
              sink.fact(Fact.Kind.CONFIG_SET, "pipeline")
                  .put("key", k)
                  .put("value", v)
                  .put("where", where)
                  .emit();
            });
    // Names the pipelines handler reads with the session parser (GraphIdentifierManager).
    for (String field : PIPELINE_NAMES) {
      for (String name : Proto.strings(m, field)) sql.sessionIdentifier(name, where, session, sink);
      String name = Proto.str(m, field);
      if (name != null) sql.sessionIdentifier(name, where, session, sink);
    }
    switch (frame.typeName()) {
      case "StartRun", "ExecuteOutputFlows" -> {
        // The run's checkpoints and state: written by the server (file:// accepted).
        String storage = Proto.str(m, "storage");
        if (storage != null && !storage.isEmpty())
          LocalPaths.report(sink, storage, frame.typeName() + ".storage", where, defaultFs);
      }
      case "DefineSqlGraphElements" -> {
        String file = Proto.str(m, "sql_file_path");
        if (file != null && !file.isEmpty())
          LocalPaths.report(sink, file, "DefineSqlGraphElements.sql_file_path", where, defaultFs);
        String text = Proto.str(m, "sql_text");
        // Read as any SQL is: each statement's kind, what it reads, calls and sets become facts,
        // and what the parser cannot read (pipeline statements newer than its grammar) is
        // unparseable_sql.
        if (text != null) sql.statement(text, "pipeline", where, session, sink);
      }
      case "SinkDetails" ->
          sink.fact(Fact.Kind.DATA_SOURCE, "pipeline_sink")
              .put("format", format(Proto.str(m, "format")))
              .putAll("option.", Proto.stringMap(m, "options"))
              .put("where", where)
              .emit();
      case "TableDetails" ->
          sink.fact(Fact.Kind.DATA_SOURCE, "pipeline_table")
              .put("format", format(Proto.str(m, "format")))
              .put("where", where)
              .emit();
      default -> {}
    }
  }

  // ---- reads and writes
  // -------------------------------------------------------------------------------------

  private void namedTable(Message m, Frame frame, SessionView session) {
    String where = frame.path();
    String ident = Proto.str(m, "unparsed_identifier");
    Map<String, String> options = Proto.stringMap(m, "options");
    boolean streaming =
        "true".equals(Proto.str(m, "is_streaming"))
            || (frame.parent() != null
                && "true".equals(Proto.str(frame.parent().message(), "is_streaming")));
    String subkind =
        frame.typeName().equals("RelationChanges") ? "changes" : streaming ? "stream" : "dataframe";
    TableRef ref = table(Fact.Kind.TABLE_READ, subkind, ident, options, session, where);
    if (ref != null) timeTravelOptions(ref.qualified(), options, where);
  }

  private void dataSource(Message m, Frame frame) {
    String where = frame.path();
    Map<String, String> options = Proto.stringMap(m, "options");
    boolean streaming =
        frame.parent() != null
            && "true".equals(Proto.str(frame.parent().message(), "is_streaming"));
    sink.fact(Fact.Kind.DATA_SOURCE, streaming ? "stream_read" : "read")
        .put("format", format(Proto.str(m, "format")))
        .put("paths", String.join(",", Proto.strings(m, "paths")))
        .putAll("option.", options)
        .put(
            "predicates",
            Proto.strings(m, "predicates").isEmpty()
                ? null
                : String.join(" AND ", Proto.strings(m, "predicates")))
        .put("where", where)
        .emit();
    timeTravelOptions(null, options, where);
  }

  private void writeOperation(Message m, SessionView session, String where) {
    Map<String, String> options = Proto.stringMap(m, "options");
    if (Proto.has(m, "table")) {
      Message t = (Message) m.getField(Proto.field(m, "table"));
      table(
          Fact.Kind.TABLE_WRITE,
          Proto.str(t, "save_method").toLowerCase(Locale.ROOT).replace("table_save_method_", ""),
          Proto.str(t, "table_name"),
          options,
          session,
          where);
    } else {
      sink.fact(Fact.Kind.DATA_SOURCE, "write")
          .put("format", format(Proto.str(m, "source")))
          .put("paths", Proto.str(m, "path"))
          .put("mode", Proto.str(m, "mode"))
          .putAll("option.", options)
          .put("where", where)
          .emit();
    }
  }

  private void writeStream(Message m, SessionView session, String where) {
    Map<String, String> options = Proto.stringMap(m, "options");
    String table = Proto.str(m, "table_name");
    if (table != null) {
      table(Fact.Kind.TABLE_WRITE, "stream", table, options, session, where);
    } else {
      sink.fact(Fact.Kind.DATA_SOURCE, "stream_write")
          .put("format", format(Proto.str(m, "format")))
          .put("paths", Proto.str(m, "path"))
          .put("sink", Proto.oneofCase(m, "sink_destination"))
          .putAll("option.", options)
          .put("where", where)
          .emit();
    }
  }

  /**
   * A reader's or writer's format; without one Spark uses spark.sql.sources.default, named here so that an
   * allowlist can allow it (the name resolves to no data source if a client sends it as a format).
   */
  static String format(String f) {
    return f == null || f.isEmpty() ? DEFAULT_FORMAT : f;
  }

  static final String DEFAULT_FORMAT = "(default)";

  /** A DataFrame-side table name, parsed as Spark's parseMultipartIdentifier does. */
  private TableRef table(
      Fact.Kind kind,
      String subkind,
      String ident,
      Map<String, String> options,
      SessionView session,
      String where) {
    if (ident == null) return null;
    List<String> parts = sql.sessionIdentifier(ident, where, session, sink);
    if (parts == null) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "unparseable_identifier")
          .put("identifier", ident)
          .put("where", where)
          .emit();
      return null;
    }
    TableRef ref =
        TableRef.resolve(parts, session.currentCatalog(), session.currentDatabase(), session);
    FactSink.Builder b = sink.fact(kind, subkind);
    ref.addTo(b);
    if (kind == Fact.Kind.TABLE_READ) TempViews.mark(parts, session, b);
    b.put("written", ident)
        .putAll("option.", options)
        .put("source", "dataframe")
        .put("where", where)
        .emit();
    FileQueries.report(sink, parts, "dataframe", where, session.defaultFileSystem());
    return ref;
  }

  private void timeTravelOptions(String table, Map<String, String> options, String where) {
    options.forEach(
        (k, v) -> {
          if (TIME_TRAVEL_OPTIONS.contains(k.toLowerCase(Locale.ROOT))) {
            String lower = k.toLowerCase(Locale.ROOT);
            String kind =
                lower.contains("timestamp") || lower.contains("instant") ? "TIMESTAMP" : "VERSION";
            sink.fact(Fact.Kind.TIME_TRAVEL, kind)
                .put("table", table)
                .put("syntax", "option")
                .put("option", k)
                .put("value", v)
                .put("source", "dataframe")
                .put("where", where)
                .emit();
          }
        });
  }

  /**
   * Every string field named path, paths or location, every path in a string map (options, table properties),
   * and every dotted option key (a Hadoop setting for the read or write), anywhere.
   */
  private void genericPaths(Message m, String where, String defaultFs) {
    String ctx = m.getDescriptorForType().getName();
    for (String field : List.of("path", "location")) {
      String p = Proto.str(m, field);
      if (p != null) LocalPaths.report(sink, p, ctx, where, defaultFs);
    }
    for (String each : Proto.strings(m, "paths"))
      LocalPaths.report(sink, each, ctx, where, defaultFs);
    for (var fd : m.getDescriptorForType().getFields()) {
      if (!fd.isMapField()) continue;
      boolean options = fd.getName().equals("options");
      Proto.stringMap(m, fd.getName())
          .forEach(
              (k, v) -> {
                if (options) OptionFacts.option(sink, k, v, ctx + ".options", where, defaultFs);
                else OptionFacts.property(sink, k, v, ctx + "." + fd.getName(), where, defaultFs);
              });
    }
  }

  // ---- catalog, config, functions
  // ---------------------------------------------------------------------------

  private void catalog(Message m, String where, SessionView session) {
    String op = Proto.oneofCase(m, "cat_type");
    if (op == null) return; // the walker's no_case (Coverage.REQUIRED_ONEOFS)
    Message sub = (Message) m.getField(Proto.field(m, op));
    // Catalog.scala reads these names with the session parser (parseIdent, sparkSession.table).
    for (String field : CATALOG_NAMES) {
      String name = Proto.str(sub, field);
      if (name != null) sql.sessionIdentifier(name, where, session, sink);
    }
    FactSink.Builder b =
        sink.fact(Fact.Kind.CATALOG_OP, op).put("source", "catalog_rpc").put("where", where);
    if (op.equals("clear_cache")) b.put("target", "the whole cache");
    if (op.equals("refresh_by_path")) b.put("target", "path " + Proto.str(sub, "path"));
    TableRef ref = catalogTable(sub, session);
    if (ref != null) ref.addTo(b);
    TableRef namespace = catalogNamespace(op, sub, session);
    if (namespace != null) namespace.addNamespaceTo(b);
    if (ref != null && (op.equals("cache_table") || op.equals("uncache_table"))) {
      String table = ref.qualified();
      b.put("target", "table " + table)
          .put(
              "owned_by_session",
              op.equals("uncache_table") && session.cachedBySession(table) ? "true" : null);
    }
    String provider = Proto.str(sub, "source");
    if (provider != null && op.startsWith("create_")) {
      // catalog.createTable(name, path, source, ...): the source is a data source like a reader's
      // format.
      sink.fact(Fact.Kind.DATA_SOURCE, "table_provider")
          .put("format", provider)
          .put("where", where)
          .emit();
    }
    sub.getAllFields()
        .forEach(
            (fd, v) -> {
              if (fd.isMapField()) b.putAll(fd.getName() + ".", Proto.stringMap(sub, fd.getName()));
              else if (fd.getJavaType()
                  != com.google.protobuf.Descriptors.FieldDescriptor.JavaType.MESSAGE)
                b.put(fd.getName(), v);
            });
    b.emit();
  }

  /**
   * The table a Catalog RPC names, as CatalogImpl resolves it: with a {@code db_name}, that database of the
   * session catalog (the table name taken as it is); without, the table name parsed and resolved against the
   * current catalog and namespace. Null when it names none, or the name does not parse.
   */
  private TableRef catalogTable(Message sub, SessionView session) {
    String table = Proto.str(sub, "table_name");
    if (table == null) return null;
    String db = Proto.str(sub, "db_name");
    if (db != null) return new TableRef(SessionView.SESSION_CATALOG, db, table);
    List<String> parts = sql.multipartIdentifier(table, session);
    return parts == null
        ? null
        : TableRef.resolve(parts, session.currentCatalog(), session.currentDatabase(), session);
  }

  /** The namespace listTables, getDatabase and databaseExists look in (the current one for listTables). */
  private TableRef catalogNamespace(String op, Message sub, SessionView session) {
    if (!op.equals("list_tables") && !op.equals("get_database") && !op.equals("database_exists"))
      return null;
    String db = Proto.str(sub, "db_name");
    if (db == null) return new TableRef(session.currentCatalog(), session.currentDatabase(), "");
    List<String> parts = sql.multipartIdentifier(db, session);
    return parts == null ? null : TableRef.namespace(parts, session.currentCatalog(), session);
  }

  /** Pipeline fields Spark parses as names: outputs, flows, their targets and sources, run selections. */
  private static final List<String> PIPELINE_NAMES =
      List.of(
          "output_name",
          "flow_name",
          "target_dataset_name",
          "source",
          "full_refresh_selection",
          "refresh_selection");

  /** The Catalog RPC fields Spark parses as names; patterns, paths and catalog names it does not. */
  private static final List<String> CATALOG_NAMES =
      List.of("db_name", "table_name", "function_name", "view_name");

  private void typeString(String text, Frame frame, SessionView session) {
    if (text != null) sql.dataType(text, frame.path(), session, sink);
  }

  /**
   * True for a literal bound to a SQL text's parameters (at any depth of its argument expressions): newer
   * Spark releases splice bound values into the text as SQL literals before substitution runs (the parameter
   * context of SparkSqlParser), so a string value is read like the text itself. Stops at the enclosing
   * relation or command, a few levels up.
   */
  private static boolean isSqlParameter(Frame frame) {
    for (Frame p = frame.parent(); p != null; p = p.parent()) {
      switch (p.typeName()) {
        case "SQL", "SqlCommand" -> {
          return true;
        }
        case "Relation", "Command", "Plan" -> {
          return false;
        }
        default -> {}
      }
    }
    return false;
  }

  /**
   * Column metadata keys whose values Spark parses as expressions: the default value
   * (ResolveDefaultColumns, read by the session parser when catalog.createTable builds its columns) and the
   * generation expression of a generated column.
   */
  private static final List<String> EXPRESSION_METADATA =
      List.of("CURRENT_DEFAULT", "EXISTS_DEFAULT", "generationExpression");

  /** Strict: a repeated key or trailing text is not guessed at (which copy would Spark take?). */
  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      com.fasterxml.jackson.databind.json.JsonMapper.builder()
          .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

  /** A struct field's metadata (JSON): the expressions it carries are read as expression strings. */
  private void fieldMetadata(Frame frame, SessionView session) {
    String metadata = frame.str("metadata");
    if (metadata == null || EXPRESSION_METADATA.stream().noneMatch(metadata::contains)) return;
    String where = frame.path() + ".metadata";
    com.fasterxml.jackson.databind.JsonNode json;
    try {
      json = JSON.readTree(metadata);
    } catch (java.io.IOException e) {
      json = null;
    }
    if (json == null || !json.isObject()) {
      sink.unclassified("unreadable_metadata", where, "column metadata that is not a JSON object");
      return;
    }
    for (String key : EXPRESSION_METADATA) {
      com.fasterxml.jackson.databind.JsonNode value = json.get(key);
      if (value == null) continue;
      if (value.isTextual()) sql.expression(value.asText(), where + "." + key, session, sink);
      else sink.unclassified("unreadable_metadata", where, key + " that is not a string");
    }
  }

  /**
   * AnalyzePlan Persist and Unpersist (df.persist(), df.unpersist()): a CATALOG_OP persist or unpersist with
   * the digest of the relation, which the client sends alike for both (the same DataFrame, the same plan;
   * {@link #planDigest}).
   * Spark's cache is shared by every session, so an unpersist is {@code owned_by_session} only for a plan this
   * session persisted that no other session's entry could share. The relation's tables are reported as its
   * own facts by the walk.
   */
  private void cachedPlan(Frame frame, SessionView session) {
    if (frame.parent() == null || !frame.parent().type().equals("spark.connect.AnalyzePlanRequest"))
      return;
    Message m = frame.message();
    boolean persist = frame.shape().name.equals("Persist");
    FactSink.Builder b =
        sink.fact(Fact.Kind.CATALOG_OP, persist ? "persist" : "unpersist")
            .put("source", "analyze_rpc")
            .put("target", "a DataFrame")
            .put("where", frame.path());
    if (Proto.has(m, "relation")) {
      String digest = planDigest((Message) m.getField(Proto.field(m, "relation")));
      b.put("plan", digest)
          .put("owned_by_session", !persist && session.persistedBySession(digest) ? "true" : null);
    }
    b.emit();
  }

  /**
   * The first 32 hex digits of the SHA-256 of a relation's canonical encoding: plan ids (RelationCommon and
   * every {@code plan_id}, numbers a client hands out as it builds DataFrames) left out, so the same
   * DataFrame built again, in this session or another, has the same digest. A parsed message re-encodes the
   * same way each time (fields in number order, unknown fields kept).
   */
  static String planDigest(Message relation) {
    try {
      byte[] hash =
          java.security.MessageDigest.getInstance("SHA-256")
              .digest(withoutPlanIds(relation).toByteArray());
      return java.util.HexFormat.of().formatHex(hash, 0, 16);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }

  private static final java.util.Set<String> COMMON_MESSAGES =
      java.util.Set.of("RelationCommon", "ExpressionCommon");

  /** Recursion as deep as the message, which was parsed within the inspector's nesting bound. */
  private static Message withoutPlanIds(Message m) {
    Message.Builder b = null;
    for (var e : m.getAllFields().entrySet()) {
      var fd = e.getKey();
      boolean message =
          fd.getJavaType() == com.google.protobuf.Descriptors.FieldDescriptor.JavaType.MESSAGE;
      // Plan ids and call sites (the JVM client records the stack of each DataFrame call in
      // ExpressionCommon) differ between equal plans built twice; Spark's sameResult ignores both.
      if (fd.getName().equals("plan_id")
          || (message && COMMON_MESSAGES.contains(fd.getMessageType().getName()))) {
        if (b == null) b = m.toBuilder();
        b.clearField(fd);
      } else if (message) {
        if (b == null) b = m.toBuilder();
        if (fd.isRepeated()) {
          b.clearField(fd);
          for (Object v : (List<?>) e.getValue())
            b.addRepeatedField(fd, withoutPlanIds((Message) v));
        } else {
          b.setField(fd, withoutPlanIds((Message) e.getValue()));
        }
      }
    }
    return b == null ? m : b.build();
  }

  private static boolean isConfigOperation(Frame frame) {
    return frame.parent() != null
        && frame.parent().type().equals("spark.connect.ConfigRequest.Operation");
  }

  private void configSet(Frame frame, SessionView session) {
    if (!isConfigOperation(frame)) return;
    Message m = frame.message();
    var pairs = Proto.field(m, "pairs");
    for (int i = 0; i < m.getRepeatedFieldCount(pairs); i++) {
      Message kv = (Message) m.getRepeatedField(pairs, i);
      ParserSettings.checkChange(Proto.str(kv, "key"), session, frame.path(), sink);
      sink.fact(Fact.Kind.CONFIG_SET, "config_rpc")
          .put("key", Proto.str(kv, "key"))
          .put("value", Proto.str(kv, "value"))
          .put("where", frame.path())
          .emit();
    }
  }

  private void function(
      String name, String subkind, Frame frame, SessionView session, boolean multipart) {
    if (name == null) return;
    List<String> parts =
        multipart ? sql.sessionIdentifier(name, frame.path(), session, sink) : List.of(name);
    if (parts == null) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "unparseable_identifier")
          .put("identifier", name)
          .put("where", frame.path())
          .emit();
      return;
    }
    FunctionNames.fact(sink, subkind, parts, session)
        .put("written", name)
        .put("source", "dataframe")
        .put("where", frame.path())
        .emit();
  }

  // ---- user code
  // --------------------------------------------------------------------------------------------

  /** Leaf code carriers; the subkind comes from the nearest ancestor that says how the code is used. */
  private void userCode(Frame frame) {
    Message m = frame.message();
    String leaf = frame.typeName();
    String udfType =
        switch (leaf) {
          case "ScalarScalaUDF" -> "scala";
          case "JavaUDF" -> "java";
          default -> "python";
        };
    String subkind =
        switch (leaf) {
          case "ScalarScalaUDF" -> "scala_udf";
          case "JavaUDF" -> "java_udf";
          case "PythonUDTF" -> "udtf";
          case "PythonDataSource" -> "python_data_source";
          default -> "python_udf";
        };
    String functionName = null;
    Frame via = frame;
    for (Frame p = frame.parent(); p != null; via = p, p = p.parent()) {
      String name = p.typeName();
      if (name.startsWith("CommonInlineUserDefined")) {
        if (functionName == null) functionName = p.str("function_name");
        if (functionName == null) functionName = p.str("name");
        continue;
      }
      String context =
          switch (name) {
            case "MapPartitions" -> "map_partitions";
            case "GroupMap" ->
                Proto.has(p.message(), "transform_with_state_info") || isTransformWithState(m)
                    ? "transform_with_state"
                    : "group_map";
            case "CoGroupMap" -> "co_group_map";
            case "ApplyInPandasWithState" -> "apply_in_pandas_with_state";
            case "StreamingForeachFunction" -> p.parent() == null ? "foreach_writer" : p.field();
            case "StreamingQueryListenerCommand" -> "streaming_listener";
            case "Command" ->
                switch (via.field()) {
                  case "register_function" -> "register_function";
                  case "register_table_function" -> "register_table_function";
                  case "register_data_source" -> "register_data_source";
                  default -> null;
                };
            default -> null;
          };
      if (context != null) subkind = context;
      break;
    }
    FactSink.Builder b =
        sink.fact(Fact.Kind.USER_CODE, subkind)
            .put("udf_type", udfType)
            .put("function_name", functionName)
            .put("where", frame.path());
    if (m instanceof PythonUDF py) {
      b.put("eval_type", py.getEvalType())
          .put("python_ver", py.getPythonVer())
          .put("payload_bytes", py.getCommand().size());
    } else if (m instanceof ScalarScalaUDF scala) {
      b.put("payload_bytes", scala.getPayload().size()).put("aggregate", scala.getAggregate());
    } else if (m instanceof JavaUDF java) {
      b.put("class_name", java.getClassName()).put("aggregate", java.getAggregate());
    } else {
      b.put("payload_bytes", Proto.bytesSize(m, "command"));
    }
    b.emit();
  }

  /** Spark's PythonEvalType for transformWithState (SQL_TRANSFORM_WITH_STATE_*: 211, 212). */
  private static boolean isTransformWithState(Message m) {
    return m instanceof PythonUDF py && (py.getEvalType() == 211 || py.getEvalType() == 212);
  }
}
