package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.sparkgate.proto.spark.CloneSessionRequest;
import io.sparkgate.proto.spark.Command;
import io.sparkgate.proto.spark.CommonInlineUserDefinedFunction;
import io.sparkgate.proto.spark.CompressionCodec;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.GetStatusRequest;
import io.sparkgate.proto.spark.MapPartitions;
import io.sparkgate.proto.spark.MlCommand;
import io.sparkgate.proto.spark.MlOperator;
import io.sparkgate.proto.spark.ObjectRef;
import io.sparkgate.proto.spark.PipelineAnalysisContext;
import io.sparkgate.proto.spark.PipelineCommand;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.PythonUDF;
import io.sparkgate.proto.spark.Range;
import io.sparkgate.proto.spark.ReattachOptions;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.ResultChunkingOptions;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.TestFacts;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** What the inspector makes of the protocol features of Spark 4.1 and 4.2. */
final class ProtocolFeaturesTest {
  private static final String SESSION = "00000000-0000-4000-8000-000000000001";
  private final Inspector inspector = new Inspector();

  private Facts execute(Plan plan) {
    return execute(ExecutePlanRequest.newBuilder().setSessionId(SESSION).setPlan(plan).build());
  }

  private Facts execute(ExecutePlanRequest request) {
    return inspector.inspect("ExecutePlan", request.toByteArray(), SessionView.DEFAULT);
  }

  private static Relation pythonUdfRelation() {
    return Relation.newBuilder()
        .setMapPartitions(
            MapPartitions.newBuilder()
                .setInput(Relation.newBuilder().setRange(Range.newBuilder().setEnd(10).setStep(1)))
                .setFunc(
                    CommonInlineUserDefinedFunction.newBuilder()
                        .setFunctionName("evil")
                        .setPythonUdf(
                            PythonUDF.newBuilder()
                                .setEvalType(205)
                                .setPythonVer("3.11")
                                .setCommand(ByteString.copyFromUtf8("cloudpickled")))))
        .build();
  }

  /** As a 4.1+ client compresses a plan: zstd over the serialized relation or command. */
  private static Plan compressed(
      com.google.protobuf.Message op, Plan.CompressedOperation.OpType type) {
    return Plan.newBuilder()
        .setCompressedOperation(
            Plan.CompressedOperation.newBuilder()
                .setData(ByteString.copyFrom(Zstd.compress(op.toByteArray())))
                .setOpType(type)
                .setCompressionCodec(CompressionCodec.COMPRESSION_CODEC_ZSTD))
        .build();
  }

  /** The facts without where (the compressed plan's path runs through compressed_operation). */
  private static List<String> withoutWhere(Facts facts, Fact.Kind kind) {
    return facts.ofKind(kind).stream()
        .map(
            f ->
                f.subkind()
                    + f.attrs().entrySet().stream()
                        .filter(e -> !e.getKey().equals("where"))
                        .map(Map.Entry::toString)
                        .collect(Collectors.joining(",", "{", "}")))
        .toList();
  }

  @Test
  void compressedRelation_pythonUdf_sameUserCodeFactsAsPlain() {
    Facts plain = execute(Plan.newBuilder().setRoot(pythonUdfRelation()).build());
    Facts packed =
        execute(compressed(pythonUdfRelation(), Plan.CompressedOperation.OpType.OP_TYPE_RELATION));

    assertTrue(TestFacts.has(plain, Fact.Kind.USER_CODE, "map_partitions"), plain.toString());
    assertEquals(
        withoutWhere(plain, Fact.Kind.USER_CODE), withoutWhere(packed, Fact.Kind.USER_CODE));
    assertTrue(
        packed.ofKind(Fact.Kind.USER_CODE).get(0).get("where").contains("compressed_operation"),
        packed.toString());
    assertFalse(packed.has(Fact.Kind.UNCLASSIFIED), packed.toString());
    Fact compressed = packed.ofKind(Fact.Kind.COMPRESSED_PLAN).get(0);
    assertEquals("zstd", compressed.subkind());
    assertEquals("relation", compressed.get("op_type"));
    assertEquals(
        String.valueOf(pythonUdfRelation().getSerializedSize()), compressed.get("inflated_bytes"));
    assertFalse(plain.has(Fact.Kind.COMPRESSED_PLAN), plain.toString());
  }

  @Test
  void compressedCommand_walkedLikeAPlainOne() {
    Command command =
        Command.newBuilder()
            .setSqlCommand(
                io.sparkgate.proto.spark.SqlCommand.newBuilder()
                    .setInput(
                        Relation.newBuilder()
                            .setSql(SQL.newBuilder().setQuery("SELECT reflect('a', 'b')"))))
            .build();
    Facts plain = execute(Plan.newBuilder().setCommand(command).build());
    Facts packed = execute(compressed(command, Plan.CompressedOperation.OpType.OP_TYPE_COMMAND));

    assertEquals(
        withoutWhere(plain, Fact.Kind.FUNCTION_CALL),
        withoutWhere(packed, Fact.Kind.FUNCTION_CALL));
    assertEquals("reflect", packed.ofKind(Fact.Kind.FUNCTION_CALL).get(0).get("name"));
    assertEquals("command", packed.ofKind(Fact.Kind.COMPRESSED_PLAN).get(0).get("op_type"));
  }

  @Test
  void compressedPlan_overTheBound_isUnclassifiedAndNotWalked() {
    // 2 MiB of SQL whitespace compresses to a few KiB: a small request that would inflate far.
    String query = "SELECT reflect('a', 'b')" + " ".repeat(2 << 20);
    Relation big = Relation.newBuilder().setSql(SQL.newBuilder().setQuery(query)).build();
    Plan plan = compressed(big, Plan.CompressedOperation.OpType.OP_TYPE_RELATION);
    assertTrue(plan.getSerializedSize() < 64 << 10, "compressed: " + plan.getSerializedSize());
    Inspector bounded = new Inspector(InspectorConfig.DEFAULTS.withMaxDecompressedBytes(1 << 20));

    Facts f =
        bounded.inspect(
            "ExecutePlan",
            ExecutePlanRequest.newBuilder()
                .setSessionId(SESSION)
                .setPlan(plan)
                .build()
                .toByteArray(),
            SessionView.DEFAULT);

    Fact tooLarge =
        f.ofKind(Fact.Kind.UNCLASSIFIED).stream()
            .filter(x -> x.subkind().equals("compressed_plan_too_large"))
            .findFirst()
            .orElseThrow(() -> new AssertionError(f.toString()));
    assertEquals(String.valueOf(1 << 20), tooLarge.get("limit"));
    assertFalse(f.has(Fact.Kind.FUNCTION_CALL), f.toString());
    assertFalse(f.has(Fact.Kind.COMPRESSED_PLAN), "not inspected, so not reported as such: " + f);
    assertEquals(64L << 20, InspectorConfig.DEFAULTS.maxDecompressedBytes());
  }

  @Test
  void requestOptions_resultChunkingAndReattach_notRefusedAsUnknown() {
    ExecutePlanRequest request =
        ExecutePlanRequest.newBuilder()
            .setSessionId(SESSION)
            .setOperationId("00000000-0000-4000-8000-0000000000aa")
            .setPlan(
                Plan.newBuilder()
                    .setRoot(Relation.newBuilder().setRange(Range.newBuilder().setEnd(5))))
            .addRequestOptions(
                ExecutePlanRequest.RequestOption.newBuilder()
                    .setReattachOptions(ReattachOptions.newBuilder().setReattachable(true)))
            .addRequestOptions(
                ExecutePlanRequest.RequestOption.newBuilder()
                    .setResultChunkingOptions(
                        ResultChunkingOptions.newBuilder()
                            .setAllowArrowBatchChunking(true)
                            .setPreferredArrowChunkSize(1 << 20)))
            .build();

    Facts f = execute(request);

    assertFalse(f.has(Fact.Kind.UNCLASSIFIED), f.toString());
    assertTrue(TestFacts.has(f, Fact.Kind.REQUEST, "ExecutePlan"), f.toString());
  }

  private static Facts pipeline(Inspector inspector, PipelineCommand.Builder command) {
    return inspector.inspect(
        "ExecutePlan",
        ExecutePlanRequest.newBuilder()
            .setSessionId(SESSION)
            .setPlan(Plan.newBuilder().setCommand(Command.newBuilder().setPipelineCommand(command)))
            .build()
            .toByteArray(),
        SessionView.DEFAULT);
  }

  private static Fact only(Facts facts, Fact.Kind kind, String subkind) {
    List<Fact> found =
        facts.ofKind(kind).stream().filter(f -> f.subkind().equals(subkind)).toList();
    assertEquals(1, found.size(), kind + "[" + subkind + "] in " + facts);
    return found.get(0);
  }

  @Test
  void pipelineStorage_isAPathFact_andThePipelineStaysUserCode() {
    Facts run =
        pipeline(
            inspector,
            PipelineCommand.newBuilder()
                .setStartRun(
                    PipelineCommand.StartRun.newBuilder()
                        .setDataflowGraphId("g")
                        .setStorage("file:///tmp/checkpoints")));
    Fact path = only(run, Fact.Kind.PATH, "file_scheme");
    assertEquals("file:///tmp/checkpoints", path.get("path"));
    assertEquals("file", path.get("scheme"));
    assertEquals("StartRun.storage", path.get("context"));
    assertEquals("start_run", only(run, Fact.Kind.USER_CODE, "pipeline_command").get("op"));

    Facts flows =
        pipeline(
            inspector,
            PipelineCommand.newBuilder()
                .setExecuteOutputFlows(
                    PipelineCommand.ExecuteOutputFlows.newBuilder().setStorage("/tmp/cp")));
    assertEquals("/tmp/cp", only(flows, Fact.Kind.PATH, "absolute").get("path"));
  }

  @Test
  void pipelineSqlFile_pathAndTextInspected() {
    Facts f =
        pipeline(
            inspector,
            PipelineCommand.newBuilder()
                .setDefineSqlGraphElements(
                    PipelineCommand.DefineSqlGraphElements.newBuilder()
                        .setDataflowGraphId("g")
                        .setSqlFilePath("/etc/pipelines/x.sql")
                        .setSqlText("SELECT reflect('java.lang.Runtime', 'getRuntime')")));
    assertEquals(
        "DefineSqlGraphElements.sql_file_path", only(f, Fact.Kind.PATH, "absolute").get("context"));
    assertTrue(f.any(Fact.Kind.FUNCTION_CALL, x -> "reflect".equals(x.get("name"))), f.toString());
    assertTrue(
        f.any(
            Fact.Kind.SQL, x -> x.subkind().equals("query") && "pipeline".equals(x.get("origin"))),
        f.toString());
  }

  @Test
  void pipelineSinkAndTable_areDataSources_withOptionAndConfigFacts() {
    Facts sink =
        pipeline(
            inspector,
            PipelineCommand.newBuilder()
                .setDefineOutput(
                    PipelineCommand.DefineOutput.newBuilder()
                        .setOutputName("s")
                        .setSinkDetails(
                            PipelineCommand.DefineOutput.SinkDetails.newBuilder()
                                .setFormat("kafka")
                                .putOptions("path", "file:/tmp/out")
                                .putOptions("fs.file.impl", "com.evil.Fs"))));
    Fact ds = only(sink, Fact.Kind.DATA_SOURCE, "pipeline_sink");
    assertEquals("kafka", ds.get("format"));
    assertEquals("file:/tmp/out", ds.get("option.path"));
    assertEquals("file:/tmp/out", only(sink, Fact.Kind.PATH, "file_scheme").get("path"));
    assertEquals("fs.file.impl", only(sink, Fact.Kind.CONFIG_SET, "option").get("key"));

    Facts table =
        pipeline(
            inspector,
            PipelineCommand.newBuilder()
                .setDefineOutput(
                    PipelineCommand.DefineOutput.newBuilder()
                        .setOutputName("t")
                        .setTableDetails(
                            PipelineCommand.DefineOutput.TableDetails.newBuilder()
                                .putTableProperties("location", "/tmp/t"))));
    assertEquals(
        Detectors.DEFAULT_FORMAT,
        only(table, Fact.Kind.DATA_SOURCE, "pipeline_table").get("format"));
    assertEquals("/tmp/t", only(table, Fact.Kind.PATH, "absolute").get("path"));
  }

  @Test
  void pipelineSqlConf_isAConfigSet_perGraphAndPerFlow() {
    Facts graph =
        pipeline(
            inspector,
            PipelineCommand.newBuilder()
                .setCreateDataflowGraph(
                    PipelineCommand.CreateDataflowGraph.newBuilder()
                        .putSqlConf("spark.sql.catalog.x", "com.evil.Catalog")));
    assertEquals("spark.sql.catalog.x", only(graph, Fact.Kind.CONFIG_SET, "pipeline").get("key"));
    Facts flow =
        pipeline(
            inspector,
            PipelineCommand.newBuilder()
                .setDefineFlow(
                    PipelineCommand.DefineFlow.newBuilder()
                        .setFlowName("f")
                        .putSqlConf("spark.sql.shuffle.partitions", "4")
                        .setRelationFlowDetails(
                            PipelineCommand.DefineFlow.WriteRelationFlowDetails.newBuilder()
                                .setRelation(pythonUdfRelation()))));
    assertEquals("4", only(flow, Fact.Kind.CONFIG_SET, "pipeline").get("value"));
    // The flow's relation is walked: its UDF is user code of its own.
    assertTrue(TestFacts.has(flow, Fact.Kind.USER_CODE, "map_partitions"), flow.toString());
  }

  private static ExecutePlanRequest withUserExtensions(Any... extensions) {
    return ExecutePlanRequest.newBuilder()
        .setSessionId(SESSION)
        .setUserContext(
            UserContext.newBuilder().setUserId("alice").addAllExtensions(List.of(extensions)))
        .setPlan(
            Plan.newBuilder().setRoot(Relation.newBuilder().setRange(Range.newBuilder().setEnd(1))))
        .build();
  }

  @Test
  void pipelineAnalysisContext_inUserContext_isKnownAndWalked() {
    Any context =
        Any.pack(
            PipelineAnalysisContext.newBuilder()
                .setDataflowGraphId("g")
                .setDefinitionPath("flows.py")
                .build());
    assertEquals(Detectors.PIPELINE_ANALYSIS_CONTEXT, context.getTypeUrl());

    Facts f = execute(withUserExtensions(context));

    Fact ext = only(f, Fact.Kind.EXTENSION, "usercontext");
    assertEquals(Detectors.PIPELINE_ANALYSIS_CONTEXT, ext.get("type_url"));
    assertFalse(f.has(Fact.Kind.UNCLASSIFIED), f.toString());
  }

  @Test
  void pipelineAnalysisContext_itsOwnExtensionsAndGarbage_areUnknown() {
    Any nested =
        Any.pack(
            PipelineAnalysisContext.newBuilder()
                .addExtension(Any.newBuilder().setTypeUrl("type.googleapis.com/x.Hidden"))
                .build());
    Facts f = execute(withUserExtensions(nested));
    assertEquals(
        "type.googleapis.com/x.Hidden",
        only(f, Fact.Kind.UNCLASSIFIED, "unknown_extension").get("type_url"));

    Any garbage =
        Any.newBuilder()
            .setTypeUrl(Detectors.PIPELINE_ANALYSIS_CONTEXT)
            .setValue(ByteString.copyFrom(new byte[] {(byte) 0xff, (byte) 0xff}))
            .build();
    Facts g = execute(withUserExtensions(garbage));
    assertEquals(
        Detectors.PIPELINE_ANALYSIS_CONTEXT,
        only(g, Fact.Kind.UNCLASSIFIED, "unknown_extension").get("type_url"));

    Facts other =
        execute(withUserExtensions(Any.newBuilder().setTypeUrl("type.googleapis.com/x.Y").build()));
    assertTrue(TestFacts.has(other, Fact.Kind.UNCLASSIFIED, "unknown_extension"), other.toString());
  }

  @Test
  void mlRead_loadingASavedModel_isUserCodeOfItsOwnSubkind() {
    Facts f =
        execute(
            Plan.newBuilder()
                .setCommand(
                    Command.newBuilder()
                        .setMlCommand(
                            MlCommand.newBuilder()
                                .setRead(
                                    MlCommand.Read.newBuilder()
                                        .setPath("s3a://b/model")
                                        .setOperator(
                                            MlOperator.newBuilder()
                                                .setName("org.apache.spark.ml.PipelineModel")
                                                .setType(
                                                    MlOperator.OperatorType.OPERATOR_TYPE_MODEL)))))
                .build());
    Fact load = only(f, Fact.Kind.USER_CODE, "ml_model_load");
    assertEquals("s3a://b/model", load.get("path"));
    assertEquals("org.apache.spark.ml.PipelineModel", load.get("class_name"));
    assertFalse(
        f.any(
            Fact.Kind.USER_CODE,
            x -> "read".equals(x.get("op")) && !x.subkind().equals("ml_model_load")),
        f.toString());
  }

  @Test
  void mlCacheHousekeeping_isNoFact_otherMlCommandsStayUserCode() {
    for (MlCommand command :
        List.of(
            MlCommand.newBuilder().setCleanCache(MlCommand.CleanCache.getDefaultInstance()).build(),
            MlCommand.newBuilder()
                .setGetCacheInfo(MlCommand.GetCacheInfo.getDefaultInstance())
                .build())) {
      Facts f =
          execute(Plan.newBuilder().setCommand(Command.newBuilder().setMlCommand(command)).build());
      assertFalse(f.has(Fact.Kind.USER_CODE), f.toString());
      assertFalse(f.has(Fact.Kind.UNCLASSIFIED), f.toString());
    }
    Facts delete =
        execute(
            Plan.newBuilder()
                .setCommand(
                    Command.newBuilder()
                        .setMlCommand(
                            MlCommand.newBuilder()
                                .setDelete(
                                    MlCommand.Delete.newBuilder()
                                        .addObjRefs(ObjectRef.newBuilder().setId("m1")))))
                .build());
    assertEquals("delete", only(delete, Fact.Kind.USER_CODE, "ml_command").get("op"));
  }

  @Test
  void getStatusAndCloneSession_inspectedWithoutUnknowns() {
    byte[] status =
        GetStatusRequest.newBuilder()
            .setSessionId(SESSION)
            .setUserContext(UserContext.newBuilder().setUserId("alice"))
            .setOperationStatus(
                GetStatusRequest.OperationStatusRequest.newBuilder().addOperationIds("op-1"))
            .build()
            .toByteArray();
    Facts s = inspector.inspect("GetStatus", status, SessionView.DEFAULT);
    assertFalse(s.has(Fact.Kind.UNCLASSIFIED), s.toString());
    assertTrue(TestFacts.has(s, Fact.Kind.REQUEST, "GetStatus"), s.toString());

    byte[] statusExt =
        GetStatusRequest.newBuilder()
            .setSessionId(SESSION)
            .addExtensions(Any.newBuilder().setTypeUrl("type.googleapis.com/x.Y"))
            .build()
            .toByteArray();
    assertTrue(
        TestFacts.has(
            inspector.inspect("GetStatus", statusExt, SessionView.DEFAULT),
            Fact.Kind.UNCLASSIFIED,
            "unknown_extension"));

    byte[] clone =
        CloneSessionRequest.newBuilder()
            .setSessionId(SESSION)
            .setNewSessionId("00000000-0000-4000-8000-000000000002")
            .build()
            .toByteArray();
    Facts c = inspector.inspect("CloneSession", clone, SessionView.DEFAULT);
    assertFalse(c.has(Fact.Kind.UNCLASSIFIED), c.toString());
    assertEquals(
        "00000000-0000-4000-8000-000000000002",
        only(c, Fact.Kind.REQUEST, "CloneSession").get("new_session_id"));
  }
}
