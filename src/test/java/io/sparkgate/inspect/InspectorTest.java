package io.sparkgate.inspect;

import static io.sparkgate.testing.WireBytes.concat;
import static io.sparkgate.testing.WireBytes.field;
import static io.sparkgate.testing.WireBytes.header;
import static io.sparkgate.testing.WireBytes.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import com.google.protobuf.ByteString;
import io.sparkgate.proto.spark.*;
import io.sparkgate.testing.TestFacts;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/** Requests shaped like the JVM client's (4.0) produce the expected facts; bounds give facts, not crashes. */
final class InspectorTest {
  private final Inspector inspector = new Inspector();
  private static final UserContext USER = UserContext.newBuilder().setUserId("alice").build();

  private Facts execute(Plan.Builder plan) {
    return inspector.inspect(
        "spark.connect.SparkConnectService/ExecutePlan",
        ExecutePlanRequest.newBuilder()
            .setSessionId("s1")
            .setUserContext(USER)
            .setOperationId("op1")
            .setPlan(plan)
            .build()
            .toByteArray(),
        SessionView.DEFAULT);
  }

  private static Relation range() {
    return Relation.newBuilder().setRange(Range.newBuilder().setEnd(10)).build();
  }

  @Test
  void java_lambda_udf_is_scala_udf_payload() {
    Expression udf =
        Expression.newBuilder()
            .setCommonInlineUserDefinedFunction(
                CommonInlineUserDefinedFunction.newBuilder()
                    .setFunctionName("f")
                    .setScalarScalaUdf(
                        ScalarScalaUDF.newBuilder()
                            .setPayload(
                                ByteString.copyFrom(new byte[] {(byte) 0xac, (byte) 0xed}))))
            .build();
    Facts f =
        execute(
            Plan.newBuilder()
                .setRoot(
                    Relation.newBuilder()
                        .setProject(Project.newBuilder().setInput(range()).addExpressions(udf))));
    Fact code = f.ofKind(Fact.Kind.USER_CODE).get(0);
    assertEquals("scala_udf", code.subkind());
    assertEquals("f", code.get("function_name"));
    assertEquals("alice", f.ofKind(Fact.Kind.REQUEST).get(0).get("user_id"));
    assertEquals("op1", f.ofKind(Fact.Kind.REQUEST).get(0).get("operation_id"));
    Facts java =
        execute(
            Plan.newBuilder()
                .setCommand(
                    Command.newBuilder()
                        .setRegisterFunction(
                            CommonInlineUserDefinedFunction.newBuilder()
                                .setFunctionName("g")
                                .setJavaUdf(JavaUDF.newBuilder().setClassName("com.x.G")))));
    assertEquals("register_function", java.ofKind(Fact.Kind.USER_CODE).get(0).subkind());
    assertEquals("com.x.G", java.ofKind(Fact.Kind.USER_CODE).get(0).get("class_name"));
  }

  @Test
  void foreach_and_map_partitions() {
    // Dataset.foreach in the JVM client is a MapPartitions with a ScalarScalaUDF.
    Facts f =
        execute(
            Plan.newBuilder()
                .setRoot(
                    Relation.newBuilder()
                        .setMapPartitions(
                            MapPartitions.newBuilder()
                                .setInput(range())
                                .setFunc(
                                    CommonInlineUserDefinedFunction.newBuilder()
                                        .setScalarScalaUdf(
                                            ScalarScalaUDF.newBuilder()
                                                .setPayload(ByteString.copyFromUtf8("x")))))));
    assertTrue(TestFacts.has(f, Fact.Kind.USER_CODE, "map_partitions"));
    Facts stream =
        execute(
            Plan.newBuilder()
                .setCommand(
                    Command.newBuilder()
                        .setWriteStreamOperationStart(
                            WriteStreamOperationStart.newBuilder()
                                .setInput(range())
                                .setForeachBatch(
                                    StreamingForeachFunction.newBuilder()
                                        .setScalaFunction(ScalarScalaUDF.getDefaultInstance())))));
    assertTrue(TestFacts.has(stream, Fact.Kind.USER_CODE, "foreach_batch"), stream.toString());
  }

  @Test
  void conf_set_by_config_rpc() {
    Facts f =
        inspector.inspect(
            "Config",
            ConfigRequest.newBuilder()
                .setSessionId("s1")
                .setUserContext(USER)
                .setOperation(
                    ConfigRequest.Operation.newBuilder()
                        .setSet(
                            ConfigRequest.Set.newBuilder()
                                .addPairs(
                                    KeyValue.newBuilder()
                                        .setKey(
                                            "spark.sql.artifact.copyFromLocalToFs.allowDestLocal")
                                        .setValue("true"))))
                .build()
                .toByteArray(),
            SessionView.DEFAULT);
    Fact set = f.ofKind(Fact.Kind.CONFIG_SET).get(0);
    assertEquals("spark.sql.artifact.copyFromLocalToFs.allowDestLocal", set.get("key"));
    assertEquals("true", set.get("value"));
  }

  @Test
  void create_dataframe_sql_with_parameters_select_expr_and_reads() {
    Facts local =
        execute(
            Plan.newBuilder()
                .setRoot(
                    Relation.newBuilder()
                        .setLocalRelation(
                            LocalRelation.newBuilder()
                                .setData(ByteString.copyFrom(new byte[100]))
                                .setSchema("a int"))));
    assertEquals(
        java.util.Set.of(Fact.Kind.REQUEST),
        local.all().stream().map(Fact::kind).collect(java.util.stream.Collectors.toSet()));

    Facts sql =
        execute(
            Plan.newBuilder()
                .setCommand(
                    Command.newBuilder()
                        .setSqlCommand(
                            SqlCommand.newBuilder()
                                .setInput(
                                    Relation.newBuilder()
                                        .setSql(
                                            SQL.newBuilder()
                                                .setQuery("SELECT * FROM t WHERE id = :id")
                                                .putNamedArguments(
                                                    "id",
                                                    Expression.newBuilder()
                                                        .setLiteral(
                                                            Expression.Literal.newBuilder()
                                                                .setInteger(1))
                                                        .build()))))));
    assertEquals("spark_catalog.default.t", sql.ofKind(Fact.Kind.TABLE_READ).get(0).get("table"));
    assertEquals("query", sql.ofKind(Fact.Kind.SQL).get(0).subkind());

    Facts expr =
        execute(
            Plan.newBuilder()
                .setRoot(
                    Relation.newBuilder()
                        .setProject(
                            Project.newBuilder()
                                .setInput(range())
                                .addExpressions(
                                    Expression.newBuilder()
                                        .setExpressionString(
                                            Expression.ExpressionString.newBuilder()
                                                .setExpression(
                                                    "reflect('java.lang.System', 'getProperty', 'user.home')"))))));
    assertEquals("reflect", expr.ofKind(Fact.Kind.FUNCTION_CALL).get(0).get("name"));

    Facts read =
        execute(
            Plan.newBuilder()
                .setRoot(
                    Relation.newBuilder()
                        .setRead(
                            Read.newBuilder()
                                .setDataSource(
                                    Read.DataSource.newBuilder()
                                        .setFormat("text")
                                        .addPaths("/etc/hostname")))));
    assertEquals("absolute", read.ofKind(Fact.Kind.PATH).get(0).subkind());
    assertEquals("text", read.ofKind(Fact.Kind.DATA_SOURCE).get(0).get("format"));

    Facts named =
        execute(
            Plan.newBuilder()
                .setRoot(
                    Relation.newBuilder()
                        .setRead(
                            Read.newBuilder()
                                .setNamedTable(
                                    Read.NamedTable.newBuilder()
                                        .setUnparsedIdentifier("iceberg.lake.`trips`")
                                        .putOptions("snapshot-id", "42")))));
    assertEquals(
        "spark_catalog.iceberg.lake.trips".substring(0, 0) + "spark_catalog.iceberg.lake",
        named.ofKind(Fact.Kind.TABLE_READ).get(0).get("catalog")
            + "."
            + named.ofKind(Fact.Kind.TABLE_READ).get(0).get("database"));
    assertEquals("option", named.ofKind(Fact.Kind.TIME_TRAVEL).get(0).get("syntax"));
  }

  @Test
  void add_artifacts_batch_and_chunked() {
    ArtifactTracker tracker = inspector.newArtifactTracker();
    byte[] jar = "PK jar bytes".getBytes();
    Facts batch =
        inspector.inspect(
            "AddArtifacts",
            AddArtifactsRequest.newBuilder()
                .setSessionId("s1")
                .setUserContext(USER)
                .setBatch(
                    AddArtifactsRequest.Batch.newBuilder()
                        .addArtifacts(
                            AddArtifactsRequest.SingleChunkArtifact.newBuilder()
                                .setName("jars/a.jar")
                                .setData(chunk(jar))))
                .build()
                .toByteArray(),
            SessionView.DEFAULT,
            tracker);
    Fact a = batch.ofKind(Fact.Kind.ARTIFACT).get(0);
    assertEquals("jars/", a.get("prefix"));
    assertEquals("true", a.get("crc_ok"));

    byte[] part1 = new byte[10];
    byte[] part2 = new byte[5];
    Facts begin =
        inspector.inspect(
            "AddArtifacts",
            AddArtifactsRequest.newBuilder()
                .setSessionId("s1")
                .setUserContext(USER)
                .setBeginChunk(
                    AddArtifactsRequest.BeginChunkedArtifact.newBuilder()
                        .setName("forward_to_fs/../x")
                        .setTotalBytes(15)
                        .setNumChunks(2)
                        .setInitialChunk(chunk(part1)))
                .build()
                .toByteArray(),
            SessionView.DEFAULT,
            tracker);
    assertEquals("forward_to_fs/", begin.ofKind(Fact.Kind.ARTIFACT).get(0).get("prefix"));
    assertTrue(TestFacts.has(begin, Fact.Kind.PATH, "parent_ref"));
    Facts last =
        inspector.inspect(
            "AddArtifacts",
            AddArtifactsRequest.newBuilder()
                .setSessionId("s1")
                .setUserContext(USER)
                .setChunk(chunk(part2))
                .build()
                .toByteArray(),
            SessionView.DEFAULT,
            tracker);
    Fact done = last.ofKind(Fact.Kind.ARTIFACT).get(0);
    assertEquals("complete", done.subkind());
    assertEquals("15", done.get("size"));
    assertEquals("forward_to_fs/../x", done.get("name"));
    assertEquals(0, inspector.finishArtifacts(tracker).size());

    Facts other =
        inspector.inspect(
            "AddArtifacts",
            AddArtifactsRequest.newBuilder()
                .setSessionId("s2")
                .setUserContext(USER)
                .setChunk(chunk(part2))
                .build()
                .toByteArray(),
            SessionView.DEFAULT,
            tracker);
    assertTrue(TestFacts.has(other, Fact.Kind.UNCLASSIFIED, "identity_changed"));
    assertTrue(TestFacts.has(other, Fact.Kind.UNCLASSIFIED, "orphan_artifact_chunk"));
  }

  private static AddArtifactsRequest.ArtifactChunk chunk(byte[] data) {
    CRC32 crc = new CRC32();
    crc.update(data);
    return AddArtifactsRequest.ArtifactChunk.newBuilder()
        .setData(ByteString.copyFrom(data))
        .setCrc(crc.getValue())
        .build();
  }

  @Test
  void a_wide_union_tree_reports_every_leaf_in_order_with_its_path() {
    int[] next = {0};
    Facts f = execute(Plan.newBuilder().setRoot(unionOfReads(1001, next)));
    int leaves = next[0];
    assertEquals(1 + leaves, f.size(), f.toString());
    java.util.List<Fact> reads = f.ofKind(Fact.Kind.TABLE_READ);
    assertEquals(leaves, reads.size());
    for (int i = 0; i < leaves; i++) assertEquals("t" + i, reads.get(i).get("name"));
    String leftmost = "plan.root" + ".set_op.left_input".repeat(9) + ".read.named_table";
    String rightmost = "plan.root" + ".set_op.right_input".repeat(9) + ".read.named_table";
    assertEquals(leftmost, reads.get(0).get("where"));
    assertEquals(rightmost, reads.get(leaves - 1).get("where"));
    assertEquals(
        0,
        execute(Plan.newBuilder().setRoot(unionOfRanges(10001)))
            .ofKind(Fact.Kind.UNCLASSIFIED)
            .size());
    assertEquals(1, execute(Plan.newBuilder().setRoot(unionOfRanges(10001))).size());
  }

  /** A balanced UNION ALL tree with {@code nodes} relations in all, its leaves reading t0, t1, ... left to right. */
  private static Relation unionOfReads(int nodes, int[] next) {
    if (nodes <= 1) {
      return Relation.newBuilder()
          .setRead(
              Read.newBuilder()
                  .setNamedTable(
                      Read.NamedTable.newBuilder().setUnparsedIdentifier("t" + next[0]++)))
          .build();
    }
    int left = (nodes - 1) / 2;
    return Relation.newBuilder()
        .setSetOp(
            SetOperation.newBuilder()
                .setLeftInput(unionOfReads(Math.max(1, left), next))
                .setRightInput(unionOfReads(Math.max(1, nodes - 1 - left), next))
                .setSetOpType(SetOperation.SetOpType.SET_OP_TYPE_UNION)
                .setIsAll(true))
        .build();
  }

  private static Relation unionOfRanges(int nodes) {
    if (nodes <= 1) return range();
    int left = (nodes - 1) / 2;
    return Relation.newBuilder()
        .setSetOp(
            SetOperation.newBuilder()
                .setLeftInput(unionOfRanges(Math.max(1, left)))
                .setRightInput(unionOfRanges(Math.max(1, nodes - 1 - left)))
                .setIsAll(true))
        .build();
  }

  @Test
  void a_100000_deep_plan_is_a_fact_read_no_deeper_than_the_bound() {
    // The innermost relation is malformed (a field of wire type 7): reading it would make the
    // request unparseable, so a plan_too_deep without that shows the inspector stopped at the depth
    // bound.
    byte[] poison = {(byte) (1 << 3 | 7)};
    byte[] shallow = executePlan(nestedLimits(10, poison));
    assertTrue(
        TestFacts.has(
            inspector.inspect("ExecutePlan", shallow, SessionView.DEFAULT),
            Fact.Kind.UNCLASSIFIED,
            "unparseable_request"),
        "the poison is noticed where it is reached");

    byte[] deep = executePlan(nestedLimits(100_000, poison));
    for (boolean fromEncoding : new boolean[] {true, false}) {
      Facts f =
          Readings.read(inspector, "ExecutePlan", deep, SessionView.DEFAULT, null, fromEncoding);
      assertTrue(TestFacts.has(f, Fact.Kind.UNCLASSIFIED, "plan_too_deep"), f.toString());
      assertEquals(
          String.valueOf(InspectorConfig.DEFAULTS.maxDepth()),
          f.ofKind(Fact.Kind.UNCLASSIFIED).get(0).get("limit"),
          f.toString());
      assertFalse(TestFacts.has(f, Fact.Kind.UNCLASSIFIED, "unparseable_request"), f.toString());
      assertFalse(TestFacts.has(f, Fact.Kind.UNCLASSIFIED, "inspector_error"));
    }
  }

  /**
   * Relation{limit (6): Limit{input (1): ...}} {@code levels} times around {@code inner}. Built as bytes, headers
   * computed inside out and written outside in: building it as messages would recurse in protobuf itself, and
   * wrapping the bytes level by level would copy them at every level.
   */
  private static byte[] nestedLimits(int levels, byte[] inner) {
    java.util.List<byte[]> headers = new java.util.ArrayList<>();
    long size = inner.length;
    for (int i = 0; i < levels; i++) {
      byte[] h1 = header(1, size);
      size += h1.length;
      byte[] h6 = header(6, size);
      size += h6.length;
      headers.add(h1);
      headers.add(h6);
    }
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (int i = headers.size() - 1; i >= 0; i--) out.writeBytes(headers.get(i));
    out.writeBytes(inner);
    return out.toByteArray();
  }

  /** ExecutePlanRequest{session_id (1): "s1", plan (3): Plan{root (1): root}}. */
  private static byte[] executePlan(byte[] root) {
    return concat(field(1, utf8("s1")), field(3, field(1, root)));
  }

  @Test
  void compressed_plans_are_inflated_and_bounded() {
    byte[] relation =
        Relation.newBuilder()
            .setSql(SQL.newBuilder().setQuery("SELECT reflect('a','b') FROM t"))
            .build()
            .toByteArray();
    Plan.Builder plan =
        Plan.newBuilder()
            .setCompressedOperation(
                Plan.CompressedOperation.newBuilder()
                    .setData(ByteString.copyFrom(Zstd.compress(relation)))
                    .setOpType(Plan.CompressedOperation.OpType.OP_TYPE_RELATION)
                    .setCompressionCodec(CompressionCodec.COMPRESSION_CODEC_ZSTD));
    Facts f = execute(plan);
    assertEquals("reflect", f.ofKind(Fact.Kind.FUNCTION_CALL).get(0).get("name"), f.toString());
    Inspector small =
        new Inspector(new InspectorConfig(1024, 1 << 20, 16, 10_000, java.util.Set.of()));
    Facts bomb =
        small.inspect(
            "ExecutePlan",
            ExecutePlanRequest.newBuilder().setSessionId("s").setPlan(plan).build().toByteArray(),
            SessionView.DEFAULT);
    assertTrue(TestFacts.has(bomb, Fact.Kind.UNCLASSIFIED, "compressed_plan_too_large"));
  }

  /**
   * Options that make Spark open a file or URL (OptionFacts.PATH_OPTIONS) are PATH facts naming the option, in
   * every form Spark hands them to the source: reader, writer, streaming reader and writer, SQL OPTIONS and
   * table properties. A filter over the paths, or an inline schema, is not a path.
   */
  @Test
  void options_that_open_files_are_paths() {
    Relation avroRead =
        Relation.newBuilder()
            .setRead(
                Read.newBuilder()
                    .setDataSource(
                        Read.DataSource.newBuilder()
                            .setFormat("avro")
                            .addPaths("s3a://b/x")
                            .putOptions("avroSchemaUrl", "file:///etc/passwd")
                            .putOptions("avroSchema", "{\"type\": \"string\"}")
                            .putOptions("pathGlobFilter", "*.avro")))
            .build();
    assertLocal(
        execute(Plan.newBuilder().setRoot(avroRead)), "file:///etc/passwd", "avroSchemaUrl");
    Facts write =
        execute(
            Plan.newBuilder()
                .setCommand(
                    Command.newBuilder()
                        .setWriteOperation(
                            WriteOperation.newBuilder()
                                .setInput(range())
                                .setSource("xml")
                                .setPath("s3a://b/out")
                                .putOptions("rowValidationXSDPath", "/etc/schema.xsd"))));
    assertLocal(write, "/etc/schema.xsd", "rowValidationXSDPath");
    Facts streamRead =
        execute(
            Plan.newBuilder()
                .setRoot(
                    Relation.newBuilder()
                        .setRead(
                            Read.newBuilder()
                                .setIsStreaming(true)
                                .setDataSource(
                                    Read.DataSource.newBuilder()
                                        .setFormat("json")
                                        .addPaths("s3a://b/in")
                                        .putOptions("cleanSource", "archive")
                                        .putOptions("sourceArchiveDir", "/tmp/archive")))));
    assertLocal(streamRead, "/tmp/archive", "sourceArchiveDir");
    Facts streamWrite =
        execute(
            Plan.newBuilder()
                .setCommand(
                    Command.newBuilder()
                        .setWriteStreamOperationStart(
                            WriteStreamOperationStart.newBuilder()
                                .setInput(range())
                                .setFormat("avro")
                                .setPath("s3a://b/out")
                                .putOptions("checkpointLocation", "s3a://b/cp")
                                .putOptions("AVROSCHEMAURL", "/etc/shadow"))));
    assertLocal(streamWrite, "/etc/shadow", "AVROSCHEMAURL");
    assertLocal(
        inspector.inspectSql(
            "CREATE TEMPORARY VIEW v USING avro OPTIONS (path 's3a://b/x', avroSchemaUrl '/etc/passwd')",
            SessionView.DEFAULT),
        "/etc/passwd",
        "avroSchemaUrl");
    assertLocal(
        inspector.inspectSql(
            "CREATE TABLE t (a INT) STORED AS AVRO TBLPROPERTIES ('avro.schema.url' = 'file:/etc/passwd')",
            SessionView.DEFAULT),
        "file:/etc/passwd",
        "avro.schema.url");
  }

  private static void assertLocal(Facts f, String path, String option) {
    assertTrue(
        f.any(
            Fact.Kind.PATH,
            p ->
                path.equals(p.get("path"))
                    && p.get("context").endsWith("." + option)
                    && p.get("scheme").equals("file")),
        f.toString());
    assertFalse(
        f.any(Fact.Kind.PATH, p -> p.get("path").startsWith("{") || p.get("path").startsWith("*")),
        "an inline schema or a glob filter is not a path: " + f);
  }

  /**
   * addListener with no listener in it is refused as unreadable (the server would deserialize an empty
   * payload); removeListener carries only the id, and a Python listener is user code as before.
   */
  @Test
  void an_empty_add_listener_is_unclassified_remove_listener_is_not() {
    var listener = StreamingQueryManagerCommand.StreamingQueryListenerCommand.newBuilder();
    Facts empty = listenerCommand(true, listener.clone());
    assertTrue(
        empty.any(
            Fact.Kind.UNCLASSIFIED,
            f ->
                f.subkind().equals("empty_message")
                    && f.get("where").endsWith("add_listener")
                    && f.get("message")
                        .equals(
                            "spark.connect.StreamingQueryManagerCommand.StreamingQueryListenerCommand")),
        empty.toString());
    Facts idOnly = listenerCommand(true, listener.clone().setId("l1"));
    assertTrue(TestFacts.has(idOnly, Fact.Kind.UNCLASSIFIED, "empty_message"), idOnly.toString());
    Facts remove = listenerCommand(false, listener.clone().setId("l1"));
    assertFalse(remove.has(Fact.Kind.UNCLASSIFIED), remove.toString());
    Facts python =
        listenerCommand(
            true,
            listener
                .clone()
                .setId("l1")
                .setPythonListenerPayload(
                    PythonUDF.newBuilder()
                        .setCommand(ByteString.copyFromUtf8("x"))
                        .setPythonVer("3.11")));
    assertFalse(python.has(Fact.Kind.UNCLASSIFIED), python.toString());
    assertEquals("streaming_listener", python.ofKind(Fact.Kind.USER_CODE).get(0).subkind());
    // The same empty command as raw bytes: plan(3) { command(2) {
    // streaming_query_manager_command(9) {
    // add_listener(5) {} } } }.
    byte[] raw = concat(field(1, utf8("s1")), field(3, field(2, field(9, field(5, new byte[0])))));
    Facts fromBytes = inspector.inspect("ExecutePlan", raw, SessionView.DEFAULT);
    assertTrue(
        TestFacts.has(fromBytes, Fact.Kind.UNCLASSIFIED, "empty_message"), fromBytes.toString());
    // No case at all in the manager command, and an empty command.
    for (byte[] nothing :
        new byte[][] {
          concat(field(1, utf8("s1")), field(3, field(2, field(9, new byte[0])))),
          concat(field(1, utf8("s1")), field(3, field(2, new byte[0]))),
          concat(field(1, utf8("s1")), field(3, new byte[0]))
        }) {
      Facts f = inspector.inspect("ExecutePlan", nothing, SessionView.DEFAULT);
      assertTrue(TestFacts.has(f, Fact.Kind.UNCLASSIFIED, "no_case"), f.toString());
    }
  }

  private Facts listenerCommand(
      boolean add, StreamingQueryManagerCommand.StreamingQueryListenerCommand.Builder listener) {
    StreamingQueryManagerCommand.Builder command = StreamingQueryManagerCommand.newBuilder();
    if (add) command.setAddListener(listener);
    else command.setRemoveListener(listener);
    return execute(
        Plan.newBuilder()
            .setCommand(Command.newBuilder().setStreamingQueryManagerCommand(command)));
  }

  @Test
  void unknown_fields_garbage_and_unknown_methods_are_facts() {
    byte[] withUnknown =
        concat(
            ExecutePlanRequest.newBuilder()
                .setSessionId("s")
                .setPlan(Plan.newBuilder().setRoot(range()))
                .build()
                .toByteArray(),
            field(4242, utf8("smuggled")));
    assertTrue(
        TestFacts.has(
            inspector.inspect("ExecutePlan", withUnknown, SessionView.DEFAULT),
            Fact.Kind.UNCLASSIFIED,
            "unknown_field"));
    assertTrue(
        TestFacts.has(
            inspector.inspect("ExecutePlan", new byte[] {(byte) 0xff, 1, 2}, SessionView.DEFAULT),
            Fact.Kind.UNCLASSIFIED,
            "unparseable_request"));
    assertTrue(
        TestFacts.has(
            inspector.inspect("BatchExecutePlan", new byte[0], SessionView.DEFAULT),
            Fact.Kind.UNCLASSIFIED,
            "unknown_method"));
    Facts interrupt =
        inspector.inspect(
            "Interrupt",
            InterruptRequest.newBuilder()
                .setSessionId("s9")
                .setUserContext(USER)
                .setOperationId("op")
                .build()
                .toByteArray(),
            SessionView.DEFAULT);
    assertEquals("s9", interrupt.ofKind(Fact.Kind.REQUEST).get(0).get("session_id"));
  }
}
