package io.sparkgate.inspect;

import java.util.Set;

/**
 * How each oneof case of the plan's open-ended oneofs is treated. Structural cases carry no code, table or
 * setting of their own: the walker descends into their fields, where detectors find what they hold. Detected
 * cases have a detector. Anything else, including a case added by a newer Spark release after the protos are
 * regenerated, is UNCLASSIFIED. CoverageTest enumerates the descriptors so no case goes unreviewed.
 */
final class Coverage {
  private Coverage() {}

  /** Oneofs whose cases are reviewed here, by full oneof name. */
  static final Set<String> REVIEWED_ONEOFS =
      Set.of(
          "spark.connect.Relation.rel_type",
          "spark.connect.Command.command_type",
          "spark.connect.Expression.expr_type",
          "spark.connect.AnalyzePlanRequest.analyze",
          "spark.connect.Catalog.cat_type",
          "spark.connect.ConfigRequest.Operation.op_type",
          "spark.connect.MlCommand.command",
          "spark.connect.PipelineCommand.command_type",
          "spark.connect.PipelineCommand.DefineOutput.details",
          "spark.connect.PipelineCommand.DefineFlow.details",
          "spark.connect.ExecutePlanRequest.RequestOption.request_option");

  /** Cases (oneof full name + "." + field name) that are walked without a detector of their own. */
  static final Set<String> STRUCTURAL =
      Set.of(
          // Relation
          r("read"),
          r("project"),
          r("filter"),
          r("join"),
          r("set_op"),
          r("sort"),
          r("limit"),
          r("aggregate"),
          r("local_relation"),
          r("sample"),
          r("offset"),
          r("deduplicate"),
          r("range"),
          r("subquery_alias"),
          r("repartition"),
          r("to_df"),
          r("with_columns_renamed"),
          r("show_string"),
          r("drop"),
          r("tail"),
          r("with_columns"),
          r("hint"),
          r("unpivot"),
          r("to_schema"),
          r("repartition_by_expression"),
          r("collect_metrics"),
          r("parse"),
          r("group_map"),
          r("co_group_map"),
          r("with_watermark"),
          r("apply_in_pandas_with_state"),
          r("html_string"),
          r("cached_local_relation"),
          r("cached_remote_relation"),
          r("as_of_join"),
          r("lateral_join"),
          r("chunked_cached_local_relation"),
          r("transpose"),
          r("unresolved_table_valued_function"),
          r("fill_na"),
          r("drop_na"),
          r("replace"),
          r("summary"),
          r("crosstab"),
          r("describe"),
          r("cov"),
          r("corr"),
          r("approx_quantile"),
          r("freq_items"),
          r("sample_by"),
          r("catalog"),
          r("map_partitions"),
          r("common_inline_user_defined_table_function"),
          r("common_inline_user_defined_data_source"),
          r("with_relations"),
          r("ml_relation"),
          r("sql"),
          r("relation_changes"),
          r("nearest_by_join"),
          // Extensions: the Any detector reports EXTENSION (and unknown_extension unless configured
          // as known).
          r("extension"),
          c("extension"),
          e("extension"),
          // Command
          c("write_operation"),
          c("create_dataframe_view"),
          c("write_operation_v2"),
          c("sql_command"),
          c("write_stream_operation_start"),
          c("streaming_query_command"),
          c("get_resources_command"),
          c("streaming_query_manager_command"),
          c("streaming_query_listener_bus_command"),
          c("checkpoint_command"),
          c("remove_cached_remote_relation_command"),
          c("merge_into_table_command"),
          c("register_function"),
          c("register_table_function"),
          c("register_data_source"),
          c("ml_command"),
          c("execute_external_command"),
          c("pipeline_command"),
          c("create_resource_profile_command"),
          // Expression
          e("literal"),
          e("unresolved_attribute"),
          e("unresolved_function"),
          e("expression_string"),
          e("unresolved_star"),
          e("alias"),
          e("cast"),
          e("unresolved_regex"),
          e("sort_order"),
          e("lambda_function"),
          e("window"),
          e("unresolved_extract_value"),
          e("update_fields"),
          e("unresolved_named_lambda_variable"),
          e("common_inline_user_defined_function"),
          e("call_function"),
          e("named_argument_expression"),
          e("merge_action"),
          e("typed_aggregate_expression"),
          e("subquery_expression"),
          e("direct_shuffle_partition_id"),
          // AnalyzePlan: every variant is walked; plans inside get the same inspection as
          // ExecutePlan.
          a("schema"),
          a("explain"),
          a("tree_string"),
          a("is_local"),
          a("is_streaming"),
          a("input_files"),
          a("spark_version"),
          a("ddl_parse"),
          a("same_semantics"),
          a("semantic_hash"),
          a("persist"),
          a("unpersist"),
          a("get_storage_level"),
          a("json_to_ddl"),
          // Pipelines (4.1+): every command is USER_CODE pipeline_command; its messages' settings,
          // paths, sinks and SQL are detected (Detectors.pipeline), relations walked.
          p("create_dataflow_graph"),
          p("define_output"),
          p("define_flow"),
          p("drop_dataflow_graph"),
          p("start_run"),
          p("define_sql_graph_elements"),
          p("get_query_function_execution_signal_stream"),
          p("define_flow_query_function_result"),
          p("execute_output_flows"),
          p("extension"),
          "spark.connect.PipelineCommand.DefineOutput.details.table_details",
          "spark.connect.PipelineCommand.DefineOutput.details.sink_details",
          "spark.connect.PipelineCommand.DefineOutput.details.extension",
          "spark.connect.PipelineCommand.DefineFlow.details.relation_flow_details",
          "spark.connect.PipelineCommand.DefineFlow.details.auto_cdc_flow_details",
          "spark.connect.PipelineCommand.DefineFlow.details.extension",
          // ExecutePlan request options: reattachable execution and (4.1+) Arrow batch chunking
          // carry only flags and sizes, forwarded as sent; an extension is reported as any other.
          "spark.connect.ExecutePlanRequest.RequestOption.request_option.reattach_options",
          "spark.connect.ExecutePlanRequest.RequestOption.request_option.result_chunking_options",
          "spark.connect.ExecutePlanRequest.RequestOption.request_option.extension",
          // Config operations: set/unset are detected in ConfigDetector; reads carry nothing.
          "spark.connect.ConfigRequest.Operation.op_type.set",
          "spark.connect.ConfigRequest.Operation.op_type.get",
          "spark.connect.ConfigRequest.Operation.op_type.get_with_default",
          "spark.connect.ConfigRequest.Operation.op_type.get_option",
          "spark.connect.ConfigRequest.Operation.op_type.get_all",
          "spark.connect.ConfigRequest.Operation.op_type.unset",
          "spark.connect.ConfigRequest.Operation.op_type.is_modifiable");

  /**
   * Cases reviewed and reported as UNCLASSIFIED unknown_case on purpose: Relation.unknown is what a client
   * sends for a plan node it could not express; nothing should need it through a shared proxy.
   */
  static final Set<String> DELIBERATELY_UNCLASSIFIED = Set.of(r("unknown"));

  /**
   * Oneofs that say what the server is to do (an operation, a plan node, a code carrier, a data source): one
   * with no case set is an UNCLASSIFIED no_case fact. The server would refuse most of them itself, but the
   * inspector has nothing to read there, and what it cannot read it refuses ("refuse what you cannot read"
   * holds for empty messages too). No client sends them empty; CoverageTest builds each.
   */
  static final Set<String> REQUIRED_ONEOFS =
      Set.of(
          "spark.connect.Plan.op_type",
          "spark.connect.Relation.rel_type",
          "spark.connect.Command.command_type",
          "spark.connect.Expression.expr_type",
          "spark.connect.AnalyzePlanRequest.analyze",
          "spark.connect.AddArtifactsRequest.payload",
          "spark.connect.ReleaseExecuteRequest.release",
          "spark.connect.ConfigRequest.Operation.op_type",
          "spark.connect.Read.read_type",
          "spark.connect.Catalog.cat_type",
          "spark.connect.CommonInlineUserDefinedFunction.function",
          "spark.connect.CommonInlineUserDefinedTableFunction.function",
          "spark.connect.CommonInlineUserDefinedDataSource.data_source",
          "spark.connect.StreamingForeachFunction.function",
          "spark.connect.StreamingQueryCommand.command",
          "spark.connect.StreamingQueryManagerCommand.command",
          "spark.connect.StreamingQueryListenerBusCommand.command",
          "spark.connect.MlCommand.command",
          "spark.connect.MlCommand.Write.type",
          "spark.connect.MlRelation.ml_type",
          "spark.connect.MlRelation.Transform.operator",
          "spark.connect.PipelineCommand.command_type");

  /**
   * Oneofs that may be left unset: a default the server applies (no trigger, save() without a path or table,
   * Interrupt of all operations, a pipeline output without details such as a temporary view, an empty request
   * option, which the server skips), or a value, a type or metadata the server reads as data and refuses
   * itself when it is missing.
   */
  static final Set<String> OPTIONAL_ONEOFS =
      Set.of(
          "spark.connect.InterruptRequest.interrupt",
          "spark.connect.ExecutePlanRequest.RequestOption.request_option",
          "spark.connect.WriteOperation.save_type",
          "spark.connect.WriteStreamOperationStart.trigger",
          "spark.connect.WriteStreamOperationStart.sink_destination",
          "spark.connect.PipelineCommand.DefineOutput.details",
          "spark.connect.PipelineCommand.DefineFlow.details",
          "spark.connect.PipelineCommand.DefineOutput.TableDetails.schema",
          "spark.connect.Origin.function",
          "spark.connect.Expression.Literal.literal_type",
          "spark.connect.Expression.Literal.SpecializedArray.value_type",
          "spark.connect.Expression.Cast.cast_to_type",
          "spark.connect.Expression.Window.WindowFrame.FrameBoundary.boundary",
          "spark.connect.DataType.kind",
          "spark.connect.Fetch.Method.Args.args_type");

  /**
   * Message fields a request must have for the server to do anything: without them it has nothing to run,
   * and the inspector nothing to read (UNCLASSIFIED missing_field).
   */
  static final Set<String> REQUIRED_FIELDS =
      Set.of("spark.connect.ExecutePlanRequest.plan", "spark.connect.ConfigRequest.operation");

  /** True if the walker handles this case; false means an UNCLASSIFIED unknown_case fact. */
  static boolean isHandled(String oneofFullName, String caseName) {
    String key = oneofFullName + "." + caseName;
    if (STRUCTURAL.contains(key)) return true;
    // Catalog and ML cases are all reported by CATALOG_OP / USER_CODE facts with the case name.
    return oneofFullName.equals("spark.connect.Catalog.cat_type")
        || oneofFullName.equals("spark.connect.MlCommand.command");
  }

  private static String p(String f) {
    return "spark.connect.PipelineCommand.command_type." + f;
  }

  private static String r(String f) {
    return "spark.connect.Relation.rel_type." + f;
  }

  private static String c(String f) {
    return "spark.connect.Command.command_type." + f;
  }

  private static String e(String f) {
    return "spark.connect.Expression.expr_type." + f;
  }

  private static String a(String f) {
    return "spark.connect.AnalyzePlanRequest.analyze." + f;
  }
}
