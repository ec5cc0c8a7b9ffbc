package io.sparkgate.inspect;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.sparkgate.proto.spark.CommonInlineUserDefinedFunction;
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
      case "CreateDataFrameViewCommand" ->
          sink.fact(Fact.Kind.CATALOG_OP, "create_temp_view")
              .put("name", frame.str("name"))
              .put("global", frame.str("is_global"))
              .put("where", frame.path())
              .emit();
      case "Catalog" -> catalog(frame.message(), frame.path(), session);
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
      case "Set" -> configSet(frame);
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
            (k, v) ->
                sink.fact(Fact.Kind.CONFIG_SET, "pipeline")
                    .put("key", k)
                    .put("value", v)
                    .put("where", where)
                    .emit());
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
    List<String> parts = sql.multipartIdentifier(ident);
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
    FactSink.Builder b =
        sink.fact(Fact.Kind.CATALOG_OP, op).put("source", "catalog_rpc").put("where", where);
    if (op.equals("cache_table") || op.equals("uncache_table")) {
      List<String> parts =
          Proto.str(sub, "table_name") == null
              ? null
              : sql.multipartIdentifier(Proto.str(sub, "table_name"));
      if (parts != null) {
        String table =
            TableRef.resolve(parts, session.currentCatalog(), session.currentDatabase(), session)
                .qualified();
        b.put("table", table)
            .put(
                "own",
                op.equals("uncache_table") && session.cachedBySession(table) ? "true" : null);
      }
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

  private static boolean isConfigOperation(Frame frame) {
    return frame.parent() != null
        && frame.parent().type().equals("spark.connect.ConfigRequest.Operation");
  }

  private void configSet(Frame frame) {
    if (!isConfigOperation(frame)) return;
    Message m = frame.message();
    var pairs = Proto.field(m, "pairs");
    for (int i = 0; i < m.getRepeatedFieldCount(pairs); i++) {
      Message kv = (Message) m.getRepeatedField(pairs, i);
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
    List<String> parts = multipart ? sql.multipartIdentifier(name) : List.of(name);
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

  static boolean isUdf(Message m) {
    return m instanceof CommonInlineUserDefinedFunction;
  }
}
