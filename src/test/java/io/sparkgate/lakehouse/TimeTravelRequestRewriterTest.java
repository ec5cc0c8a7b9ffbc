package io.sparkgate.lakehouse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.InspectorConfig;
import io.sparkgate.inspect.SessionView;
import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.Command;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Expression;
import io.sparkgate.proto.spark.Filter;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.SqlCommand;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.proto.spark.WithRelations;
import java.util.List;
import org.junit.jupiter.api.Test;

final class TimeTravelRequestRewriterTest {
  private static final TimeTravelRequestRewriter REWRITER =
      new TimeTravelRequestRewriter(InspectorConfig.DEFAULTS.maxDepth());

  /** The inspect stage's part: the facts the rewriter is given with the request. */
  private static final Inspector INSPECTOR = new Inspector();

  private static final UserContext ALICE =
      UserContext.newBuilder().setUserId("alice").setUserName("Alice").build();

  private static Relation sql(String query) {
    return Relation.newBuilder().setSql(SQL.newBuilder().setQuery(query)).build();
  }

  private static ExecutePlanRequest execute(Plan plan) {
    return ExecutePlanRequest.newBuilder()
        .setSessionId("3f0c1c9e-0000-4000-8000-000000000001")
        .setUserContext(ALICE)
        .setOperationId("op-1")
        .setPlan(plan)
        .build();
  }

  private static TimeTravelRequestRewriter.Rewritten rewrite(byte[] request, String method)
      throws RefusedException {
    return rewrite(request, method, Profiles.MIXED);
  }

  private static TimeTravelRequestRewriter.Rewritten rewrite(
      byte[] request, String method, BackendProfile profile) throws RefusedException {
    SessionView session = Profiles.session("UTC");
    return REWRITER.rewrite(
        request, method, INSPECTOR.inspect(method, request, session), session, profile);
  }

  @Test
  void planRootSql_isRewritten_andEverythingElseIsKept() throws Exception {
    ExecutePlanRequest in =
        execute(
            Plan.newBuilder()
                .setRoot(sql("SELECT * FROM iceberg.lake.trips VERSION AS OF 7"))
                .build());
    TimeTravelRequestRewriter.Rewritten out =
        rewrite(in.toByteArray(), "spark.connect.SparkConnectService/ExecutePlan");
    ExecutePlanRequest parsed = ExecutePlanRequest.parseFrom(out.request());
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.snapshot_id_7 AS trips",
        parsed.getPlan().getRoot().getSql().getQuery());
    assertEquals(
        in.toBuilder().setPlan(parsed.getPlan()).build(), parsed, "only the SQL text changed");
    assertEquals(
        List.of(
            new Rewrite(
                "iceberg.lake.trips",
                "iceberg.lake.trips VERSION AS OF 7",
                "iceberg.lake.trips.snapshot_id_7 AS trips",
                "plan.root.sql")),
        out.rewrites());
  }

  @Test
  void sqlCommand_bothThe35SqlFieldAndThe40Input() throws Exception {
    ExecutePlanRequest old =
        execute(
            Plan.newBuilder()
                .setCommand(
                    Command.newBuilder()
                        .setSqlCommand(
                            SqlCommand.newBuilder()
                                .setSql(
                                    "INSERT INTO iceberg.lake.copy SELECT * FROM iceberg.lake.trips VERSION AS OF 3")))
                .build());
    assertEquals(
        "INSERT INTO iceberg.lake.copy SELECT * FROM iceberg.lake.trips.snapshot_id_3 AS trips",
        ExecutePlanRequest.parseFrom(rewrite(old.toByteArray(), "ExecutePlan").request())
            .getPlan()
            .getCommand()
            .getSqlCommand()
            .getSql());
    ExecutePlanRequest current =
        execute(
            Plan.newBuilder()
                .setCommand(
                    Command.newBuilder()
                        .setSqlCommand(
                            SqlCommand.newBuilder()
                                .setInput(
                                    sql(
                                        "SELECT * FROM iceberg.lake.trips TIMESTAMP AS OF '2024-01-01'"))))
                .build());
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.at_timestamp_1704067200000 AS trips",
        ExecutePlanRequest.parseFrom(rewrite(current.toByteArray(), "ExecutePlan").request())
            .getPlan()
            .getCommand()
            .getSqlCommand()
            .getInput()
            .getSql()
            .getQuery());
  }

  @Test
  void withRelations_rootAndReferences() throws Exception {
    Relation with =
        Relation.newBuilder()
            .setWithRelations(
                WithRelations.newBuilder()
                    .setRoot(
                        sql("SELECT * FROM iceberg.lake.trips FOR SYSTEM_VERSION AS OF 1 JOIN v"))
                    .addReferences(sql("SELECT 1"))
                    .addReferences(sql("SELECT * FROM iceberg.lake.riders VERSION AS OF 2 r")))
            .build();
    ExecutePlanRequest out =
        ExecutePlanRequest.parseFrom(
            rewrite(execute(Plan.newBuilder().setRoot(with).build()).toByteArray(), "ExecutePlan")
                .request());
    WithRelations w = out.getPlan().getRoot().getWithRelations();
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.snapshot_id_1 AS trips JOIN v",
        w.getRoot().getSql().getQuery());
    assertEquals("SELECT 1", w.getReferences(0).getSql().getQuery());
    assertEquals(
        "SELECT * FROM iceberg.lake.riders.snapshot_id_2 r",
        w.getReferences(1).getSql().getQuery());
  }

  @Test
  void analyzePlan_isRewrittenToo() throws Exception {
    AnalyzePlanRequest in =
        AnalyzePlanRequest.newBuilder()
            .setSessionId("s")
            .setUserContext(ALICE)
            .setSchema(
                AnalyzePlanRequest.Schema.newBuilder()
                    .setPlan(
                        Plan.newBuilder()
                            .setRoot(sql("SELECT * FROM iceberg.lake.trips VERSION AS OF 4"))))
            .build();
    AnalyzePlanRequest out =
        AnalyzePlanRequest.parseFrom(rewrite(in.toByteArray(), "AnalyzePlan").request());
    assertEquals(
        "SELECT * FROM iceberg.lake.trips.snapshot_id_4 AS trips",
        out.getSchema().getPlan().getRoot().getSql().getQuery());
  }

  @Test
  void nothingToDo_returnsTheSameBytes() throws Exception {
    byte[] hudi =
        execute(
                Plan.newBuilder()
                    .setRoot(
                        sql("SELECT * FROM default.trips_cow TIMESTAMP AS OF '20240101000000000'"))
                    .build())
            .toByteArray();
    assertSame(hudi, rewrite(hudi, "ExecutePlan").request());
    byte[] iceberg =
        execute(
                Plan.newBuilder()
                    .setRoot(sql("SELECT * FROM iceberg.lake.trips VERSION AS OF 1"))
                    .build())
            .toByteArray();
    TimeTravelRequestRewriter.Rewritten icebergOnly =
        rewrite(iceberg, "ExecutePlan", Profiles.ICEBERG_ONLY);
    assertSame(iceberg, icebergOnly.request());
    assertTrue(icebergOnly.rewrites().isEmpty());
  }

  @Test
  void timeTravelWhereNoTextCanBeWrittenBackIsRefused() {
    Relation filtered =
        Relation.newBuilder()
            .setFilter(
                Filter.newBuilder()
                    .setInput(sql("SELECT 1 AS id"))
                    .setCondition(
                        Expression.newBuilder()
                            .setExpressionString(
                                Expression.ExpressionString.newBuilder()
                                    .setExpression(
                                        "id IN (SELECT id FROM iceberg.lake.trips VERSION AS OF 1)"))))
            .build();
    RefusedException e =
        assertThrows(
            RefusedException.class,
            () ->
                rewrite(
                    execute(Plan.newBuilder().setRoot(filtered).build()).toByteArray(),
                    "ExecutePlan"));
    assertEquals("iceberg.lake.trips", e.table());
    assertTrue(e.getMessage().contains("expression string"), e.getMessage());

    RefusedException immediate =
        assertThrows(
            RefusedException.class,
            () ->
                rewrite(
                    execute(
                            Plan.newBuilder()
                                .setRoot(
                                    sql(
                                        "EXECUTE IMMEDIATE 'SELECT * FROM iceberg.lake.trips VERSION AS OF 1'"))
                                .build())
                        .toByteArray(),
                    "ExecutePlan"));
    assertTrue(immediate.getMessage().contains("EXECUTE IMMEDIATE"), immediate.getMessage());
  }

  @Test
  void aBranchNameRefusesTheWholeRequest() {
    RefusedException e =
        assertThrows(
            RefusedException.class,
            () ->
                rewrite(
                    execute(
                            Plan.newBuilder()
                                .setRoot(
                                    sql(
                                        "SELECT * FROM iceberg.lake.trips VERSION AS OF 1 UNION ALL "
                                            + "SELECT * FROM iceberg.lake.trips VERSION AS OF 'main'"))
                                .build())
                        .toByteArray(),
                    "ExecutePlan"));
    assertTrue(e.reason().contains("branch or tag"), e.reason());
  }
}
