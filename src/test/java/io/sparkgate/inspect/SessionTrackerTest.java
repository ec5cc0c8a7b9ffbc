package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCalls;
import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.AnalyzePlanResponse;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ConfigResponse;
import io.sparkgate.proto.spark.KeyValue;
import io.sparkgate.proto.spark.Relation;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

final class SessionTrackerTest {
  private final AtomicLong nanos = new AtomicLong();
  private final Ticker ticker = nanos::get;
  private final BackendProfile profile =
      new BackendProfile(
          "3.5.7", List.of(), Map.of("iceberg", "org.apache.iceberg.spark.SparkCatalog"), null);
  private final Inspector inspector = new Inspector();

  @Test
  void use_and_set_catalog_follow_the_session_and_expire() {
    SessionTracker tracker =
        new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker, null);
    Answered.request(
        tracker, "u", "s", inspector.inspectSql("USE iceberg.lake", tracker.view("u", "s")));
    SessionView v = tracker.view("u", "s");
    assertEquals("iceberg", v.currentCatalog());
    assertEquals("lake", v.currentDatabase());
    assertEquals(
        "iceberg.lake.trips",
        inspector
            .inspectSql("SELECT * FROM trips", v)
            .ofKind(Fact.Kind.TABLE_READ)
            .get(0)
            .get("table"));
    assertEquals("spark_catalog", tracker.view("u", "other").currentCatalog());
    assertEquals("spark_catalog", tracker.view("other-user", "s").currentCatalog());
    nanos.addAndGet(Duration.ofMinutes(31).toNanos());
    assertEquals("spark_catalog", tracker.view("u", "s").currentCatalog());
    assertEquals(0, tracker.size());
  }

  @Test
  void catalog_rpc_and_default_catalog_config() {
    SessionTracker tracker =
        new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker, null);
    Answered.request(
        tracker,
        "u",
        "s",
        Facts.of(
            List.of(
                new Fact(
                    Fact.Kind.CATALOG_OP,
                    "set_current_catalog",
                    Map.of("catalog_name", "iceberg")))));
    Answered.request(
        tracker,
        "u",
        "s",
        Facts.of(
            List.of(
                new Fact(
                    Fact.Kind.CATALOG_OP, "set_current_database", Map.of("db_name", "lake")))));
    assertEquals("iceberg", tracker.view("u", "s").currentCatalog());
    assertEquals("lake", tracker.view("u", "s").currentDatabase());
    Answered.request(
        tracker,
        "u",
        "t",
        Facts.of(
            List.of(
                new Fact(
                    Fact.Kind.CONFIG_SET,
                    "config_rpc",
                    Map.of("key", "spark.sql.defaultCatalog", "value", "iceberg")))));
    assertEquals("iceberg", tracker.view("u", "t").currentCatalog());
  }

  @Test
  void temporary_sql_functions_are_the_sessions_own() {
    SessionTracker tracker =
        new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker, null);
    Answered.request(
        tracker,
        "u",
        "s",
        inspector.inspectSql(
            "CREATE TEMPORARY FUNCTION Plus1(x INT) RETURNS INT RETURN x + 1",
            tracker.view("u", "s")));
    Answered.request(
        tracker,
        "u",
        "s",
        inspector.inspectSql(
            "CREATE FUNCTION kept(x INT) RETURNS INT RETURN x", tracker.view("u", "s")));
    Fact call =
        inspector
            .inspectSql("SELECT plus1(1), session.PLUS1(2), kept(3)", tracker.view("u", "s"))
            .ofKind(Fact.Kind.FUNCTION_CALL)
            .get(0);
    assertEquals("true", call.get("session_function"));
    List<Fact> calls =
        inspector
            .inspectSql("SELECT plus1(1), session.PLUS1(2), kept(3)", tracker.view("u", "s"))
            .ofKind(Fact.Kind.FUNCTION_CALL);
    assertEquals("true", calls.get(1).get("session_function"));
    assertEquals(
        null, calls.get(2).get("session_function"), "a persistent function is not the session's");
    assertEquals(
        null,
        inspector
            .inspectSql("SELECT plus1(1)", tracker.view("u", "other"))
            .ofKind(Fact.Kind.FUNCTION_CALL)
            .get(0)
            .get("session_function"),
        "another session's function");
    assertEquals(
        null,
        inspector
            .inspectSql("SELECT db.plus1(1)", tracker.view("u", "s"))
            .ofKind(Fact.Kind.FUNCTION_CALL)
            .get(0)
            .get("session_function"),
        "a catalog function of that name");
  }

  /**
   * A temporary view stands for what it read when it was created: a later one-part name is the view (its
   * footprint), a qualified name or another session's never is; DROP VIEW forgets it; with a shared store
   * another replica reads it too.
   */
  @Test
  void temporary_views_standForWhatTheyRead_untilDropped() {
    for (SessionStates store : new SessionStates[] {null, new MemorySessionStates()}) {
      SessionTracker tracker =
          new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker, store);
      sql(
          tracker,
          "s",
          "CREATE TEMPORARY VIEW Mine AS SELECT * FROM sales.orders JOIN sales.items");
      Fact read =
          inspector
              .inspectSql("SELECT * FROM mine", view(tracker, store, "s"))
              .ofKind(Fact.Kind.TABLE_READ)
              .get(0);
      assertEquals("true", read.get(TempViews.TEMP_VIEW));
      assertEquals(
          "table\tspark_catalog\tsales\titems\ntable\tspark_catalog\tsales\torders",
          read.get(TempViews.VIEW_READS));
      // A view over the view takes over what it reads.
      sql(tracker, "s", "CREATE OR REPLACE TEMP VIEW v2 AS SELECT * FROM mine");
      assertEquals(
          read.get(TempViews.VIEW_READS),
          inspector
              .inspectSql("SELECT * FROM V2", view(tracker, store, "s"))
              .ofKind(Fact.Kind.TABLE_READ)
              .get(0)
              .get(TempViews.VIEW_READS));
      assertEquals(
          null,
          inspector
              .inspectSql("SELECT * FROM default.mine", view(tracker, store, "s"))
              .ofKind(Fact.Kind.TABLE_READ)
              .get(0)
              .get(TempViews.TEMP_VIEW),
          "a qualified name is a table");
      assertEquals(null, view(tracker, store, "other").tempView("mine"), "another session's");
      sql(tracker, "s", "DROP VIEW mine");
      assertEquals(null, view(tracker, store, "s").tempView("mine"));
      assertEquals(null, view(tracker, store, "s").tempView("MINE"));
    }
  }

  /**
   * A store that lost its data: a session whose state was only temporary views goes on as fresh (its view
   * names then read as tables, which grants check); one that had changed its namespace is lost.
   */
  @Test
  void storeLosesItsData_viewsAloneAreForgotten_aNamespaceIsLost() {
    MemorySessionStates store = new MemorySessionStates();
    SessionTracker tracker =
        new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker, store);
    sql(tracker, "views", "CREATE TEMP VIEW v AS SELECT 1");
    sql(tracker, "used", "USE lake");
    assertEquals("lake", tracker.view("u", "used").currentDatabase());
    assertEquals("", tracker.view("u", "views").tempView("v"));
    store.loseEverything();
    assertEquals(null, tracker.view("u", "views").tempView("v"));
    org.junit.jupiter.api.Assertions.assertThrows(
        SessionStates.Lost.class, () -> tracker.view("u", "used").currentDatabase());
  }

  /** The session's view as this replica, or (with a store) a second replica, reads it. */
  private SessionView view(SessionTracker tracker, SessionStates store, String session) {
    if (store == null) return tracker.view("u", session);
    return new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker, store)
        .view("u", session);
  }

  /** Spark's cache is the server's: a table another session cached first is never this session's to drop. */
  @Test
  void cacheTable_alreadyCachedByAnotherSession_isNotTheSecondSessionsToUncache() {
    SessionTracker tracker =
        new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker, null);
    sql(tracker, "a", "CACHE TABLE sales.Orders");
    assertEquals("true", uncache(tracker, "a", "UNCACHE TABLE sales.orders"), "the first cacher");
    sql(tracker, "b", "CACHE TABLE SALES.orders");
    assertEquals(null, uncache(tracker, "b", "UNCACHE TABLE sales.orders"), "a no-op in Spark");
    assertEquals(
        null,
        uncache(tracker, "b", "UNCACHE TABLE IF EXISTS spark_catalog.sales.ORDERS"),
        "whatever the spelling");
    // The owner drops it; then the table is free to be cached, and owned, by another session.
    sql(tracker, "a", "UNCACHE TABLE sales.orders");
    assertEquals(null, uncache(tracker, "a", "UNCACHE TABLE sales.orders"), "dropped");
    sql(tracker, "b", "CACHE TABLE sales.orders");
    assertEquals("true", uncache(tracker, "b", "UNCACHE TABLE sales.orders"));
  }

  @Test
  void uncacheTable_whileAnotherSessionCachedAPlanReadingIt_isRefused() {
    // UNCACHE TABLE cascades to every cached plan that reads the table.
    SessionTracker tracker =
        new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker, null);
    sql(tracker, "a", "CACHE TABLE sales.orders");
    Answered.request(tracker, "u", "b", analyze("b", persist(table("sales.orders", 7))));
    assertEquals(null, uncache(tracker, "a", "UNCACHE TABLE sales.orders"));
    Answered.request(tracker, "u", "b", analyze("b", unpersist(table("sales.orders", 7))));
    assertEquals("true", uncache(tracker, "a", "UNCACHE TABLE sales.orders"));
  }

  @Test
  void unpersist_ownPlan_isOwned_anotherSessionsPlan_isNot() {
    SessionTracker tracker =
        new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker, null);
    Relation mine = table("sales.orders", 1);
    Answered.request(tracker, "u", "a", analyze("a", persist(mine)));
    assertEquals("true", unpersistOwned(tracker, "a", mine), "the session's own DataFrame");
    assertEquals(null, unpersistOwned(tracker, "b", mine), "another session's");
    // Persisting it again does not make it b's: Spark did nothing.
    Answered.request(tracker, "u", "b", analyze("b", persist(mine)));
    assertEquals(null, unpersistOwned(tracker, "b", mine));
    // Nor does the same DataFrame with another plan id (the same plan to Sparkgate too).
    Relation same = table("sales.orders", 2);
    Answered.request(tracker, "u", "b", analyze("b", persist(same)));
    assertEquals(null, unpersistOwned(tracker, "b", same));
    assertEquals("true", unpersistOwned(tracker, "a", same), "a's, rebuilt");
    // Nor does another plan over the same table: Spark's sameResult may equate them.
    Relation filtered =
        Relation.newBuilder()
            .setFilter(
                io.sparkgate.proto.spark.Filter.newBuilder()
                    .setInput(same)
                    .setCondition(
                        io.sparkgate.proto.spark.Expression.newBuilder()
                            .setExpressionString(
                                io.sparkgate.proto.spark.Expression.ExpressionString.newBuilder()
                                    .setExpression("true"))))
            .build();
    Answered.request(tracker, "u", "b", analyze("b", persist(filtered)));
    assertEquals(null, unpersistOwned(tracker, "b", filtered));
    assertEquals(null, unpersistOwned(tracker, "a", mine), "now b's entry shares its tables");
    // An unrelated plan is b's own.
    Relation other = table("sales.returns", 3);
    Answered.request(tracker, "u", "b", analyze("b", persist(other)));
    assertEquals("true", unpersistOwned(tracker, "b", other));
    // The owner's unpersist, once answered, ends the ownership.
    Answered.request(tracker, "u", "b", analyze("b", unpersist(other)));
    assertEquals(null, unpersistOwned(tracker, "b", other));
  }

  /** The same DataFrame built again elsewhere in the program: another call site, the same cache entry. */
  @Test
  void unpersist_ofTheSamePlanBuiltOnAnotherLine_isTheSessionsOwn() {
    SessionTracker tracker =
        new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker, null);
    Answered.request(tracker, "u", "a", analyze("a", persist(selected(1, "Main.java:10"))));
    assertEquals("true", unpersistOwned(tracker, "a", selected(5, "Main.java:42")));
    assertEquals(null, unpersistOwned(tracker, "b", selected(5, "Main.java:42")));
  }

  /** {@code range(7).selectExpr("id * 7")} as the JVM client sends it, with plan ids and a call site. */
  private static Relation selected(long planId, String callSite) {
    io.sparkgate.proto.spark.Origin origin =
        io.sparkgate.proto.spark.Origin.newBuilder()
            .setPythonOrigin(
                io.sparkgate.proto.spark.PythonOrigin.newBuilder()
                    .setFragment("selectExpr")
                    .setCallSite(callSite))
            .build();
    return Relation.newBuilder()
        .setCommon(
            io.sparkgate.proto.spark.RelationCommon.newBuilder()
                .setPlanId(planId + 1)
                .setOrigin(origin))
        .setProject(
            io.sparkgate.proto.spark.Project.newBuilder()
                .setInput(
                    Relation.newBuilder()
                        .setCommon(
                            io.sparkgate.proto.spark.RelationCommon.newBuilder().setPlanId(planId))
                        .setRange(io.sparkgate.proto.spark.Range.newBuilder().setEnd(7).setStep(1)))
                .addExpressions(
                    io.sparkgate.proto.spark.Expression.newBuilder()
                        .setCommon(
                            io.sparkgate.proto.spark.ExpressionCommon.newBuilder()
                                .setOrigin(origin))
                        .setExpressionString(
                            io.sparkgate.proto.spark.Expression.ExpressionString.newBuilder()
                                .setExpression("id * 7"))))
        .build();
  }

  /** Two replicas of a pool behind one shared store: what one learns, the other sees. */
  @Test
  void sharedStore_replicasSeeEachOthersSessionsAndCacheOwners() {
    SharedStoreScenarios.replicasShareSessionsAndCacheOwners(new MemorySessionStates());
  }

  @Test
  void sharedStore_cacheEntriesAreClaimedWhenForwarded() {
    SharedStoreScenarios.cacheEntriesAreClaimedWhenForwarded(new MemorySessionStates());
  }

  @Test
  void sharedStore_concurrentChangesToOneSessionAreAllKept() throws Exception {
    SharedStoreScenarios.concurrentChangesToOneSessionAreAllKept(new MemorySessionStates());
  }

  @Test
  void sharedStore_aChangeTheStoreDidNotTake_refusesTheSessionHere() {
    SharedStoreScenarios.aChangeTheStoreDidNotTakeRefusesTheSession(new MemorySessionStates());
  }

  @Test
  void aRefusedRequest_changesNothing_onlyAnAppliedChangeDoes() {
    SessionTracker tracker =
        new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker, null);
    Facts use = inspector.inspectSql("USE iceberg.lake", tracker.view("u", "s"));
    SessionTracker.Change change = tracker.changes("ExecutePlan", "u", "s", use);
    assertEquals("spark_catalog", tracker.view("u", "s").currentCatalog(), "not yet answered");
    tracker.apply(change);
    assertEquals("iceberg", tracker.view("u", "s").currentCatalog());
    assertEquals(
        null,
        tracker.changes(
            "ExecutePlan", "u", "s", inspector.inspectSql("SELECT 1", tracker.view("u", "s"))),
        "nothing to learn");
  }

  private void sql(SessionTracker tracker, String session, String text) {
    Answered.request(tracker, "u", session, inspector.inspectSql(text, tracker.view("u", session)));
  }

  private String uncache(SessionTracker tracker, String session, String text) {
    return inspector
        .inspectSql(text, tracker.view("u", session))
        .ofKind(Fact.Kind.CATALOG_OP)
        .get(0)
        .get("owned_by_session");
  }

  private String unpersistOwned(SessionTracker tracker, String session, Relation plan) {
    Facts facts =
        inspector.inspect("AnalyzePlan", request(session, unpersist(plan)), tracker, null);
    return facts.ofKind(Fact.Kind.CATALOG_OP).stream()
        .filter(f -> f.subkind().equals("unpersist"))
        .findFirst()
        .orElseThrow()
        .get("owned_by_session");
  }

  /** The facts of an AnalyzePlan request of user u in {@code session}, in a fresh view. */
  private Facts analyze(String session, AnalyzePlanRequest.Builder request) {
    return inspector.inspect("AnalyzePlan", request(session, request), SessionView.DEFAULT);
  }

  private static byte[] request(String session, AnalyzePlanRequest.Builder request) {
    return request
        .setSessionId(session)
        .setUserContext(io.sparkgate.proto.spark.UserContext.newBuilder().setUserId("u"))
        .build()
        .toByteArray();
  }

  private static AnalyzePlanRequest.Builder persist(Relation relation) {
    return AnalyzePlanRequest.newBuilder()
        .setPersist(AnalyzePlanRequest.Persist.newBuilder().setRelation(relation));
  }

  private static AnalyzePlanRequest.Builder unpersist(Relation relation) {
    return AnalyzePlanRequest.newBuilder()
        .setUnpersist(AnalyzePlanRequest.Unpersist.newBuilder().setRelation(relation));
  }

  /** spark.table(name) as a client sends it, with its plan id. */
  private static Relation table(String name, long planId) {
    return Relation.newBuilder()
        .setCommon(io.sparkgate.proto.spark.RelationCommon.newBuilder().setPlanId(planId))
        .setRead(
            io.sparkgate.proto.spark.Read.newBuilder()
                .setNamedTable(
                    io.sparkgate.proto.spark.Read.NamedTable.newBuilder()
                        .setUnparsedIdentifier(name)))
        .build();
  }

  @Test
  void profiler_reads_the_backend_over_connect() throws Exception {
    String name = InProcessServerBuilder.generateName();
    var service =
        io.grpc.ServerServiceDefinition.builder(BackendProfiler.SERVICE)
            .addMethod(
                method(
                    "AnalyzePlan",
                    AnalyzePlanRequest.getDefaultInstance(),
                    AnalyzePlanResponse.getDefaultInstance()),
                ServerCalls.asyncUnaryCall(
                    (AnalyzePlanRequest req,
                        io.grpc.stub.StreamObserver<AnalyzePlanResponse> out) -> {
                      out.onNext(
                          AnalyzePlanResponse.newBuilder()
                              .setSparkVersion(
                                  AnalyzePlanResponse.SparkVersion.newBuilder().setVersion("3.5.7"))
                              .build());
                      out.onCompleted();
                    }))
            .addMethod(
                method(
                    "Config",
                    ConfigRequest.getDefaultInstance(),
                    ConfigResponse.getDefaultInstance()),
                ServerCalls.asyncUnaryCall(
                    (ConfigRequest req, io.grpc.stub.StreamObserver<ConfigResponse> out) -> {
                      ConfigResponse.Builder r = ConfigResponse.newBuilder();
                      if (req.getOperation().hasGetAll()) {
                        r.addPairs(
                                kv(
                                    "spark.sql.catalog.spark_catalog",
                                    "org.apache.spark.sql.hudi.catalog.HoodieCatalog"))
                            .addPairs(
                                kv(
                                    "spark.sql.catalog.iceberg",
                                    "org.apache.iceberg.spark.SparkCatalog"))
                            .addPairs(kv("spark.sql.catalog.iceberg.type", "hadoop"));
                      } else {
                        r.addPairs(
                                kv(
                                    "spark.sql.extensions",
                                    "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions,org.apache.spark.sql.hudi.HoodieSparkSessionExtension"))
                            .addPairs(KeyValue.newBuilder().setKey("spark.sql.defaultCatalog"))
                            .addPairs(KeyValue.newBuilder().setKey("spark.hadoop.fs.defaultFS"))
                            .addPairs(kv("fs.defaultFS", "hdfs://namenode:8020"));
                      }
                      out.onNext(r.build());
                      out.onCompleted();
                    }))
            .build();
    Server server =
        InProcessServerBuilder.forName(name).directExecutor().addService(service).build().start();
    ManagedChannel channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    try {
      BackendProfile p = new BackendProfiler(channel, "sparkgate", 5000).read();
      assertEquals("3.5.7", p.sparkVersion());
      assertEquals(
          Map.of(
              "spark_catalog",
              "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
              "iceberg",
              "org.apache.iceberg.spark.SparkCatalog"),
          p.catalogs());
      assertEquals(2, p.extensions().size());
      assertEquals("spark_catalog", p.defaultCatalog());
      assertEquals("4.0.0", p.with("4.0.0", null, null, null, null).sparkVersion());
      assertEquals("hdfs", p.defaultFs(), "fs.defaultFS read into the profile");
    } finally {
      channel.shutdownNow();
      server.shutdownNow();
    }
  }

  private static KeyValue kv(String k, String v) {
    return KeyValue.newBuilder().setKey(k).setValue(v).build();
  }

  private static <Q extends com.google.protobuf.Message, R extends com.google.protobuf.Message>
      io.grpc.MethodDescriptor<Q, R> method(String name, Q req, R resp) {
    return io.grpc.MethodDescriptor.<Q, R>newBuilder()
        .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(
            io.grpc.MethodDescriptor.generateFullMethodName(BackendProfiler.SERVICE, name))
        .setRequestMarshaller(new BackendProfiler.ProtoMarshaller<>(req))
        .setResponseMarshaller(new BackendProfiler.ProtoMarshaller<>(resp))
        .build();
  }
}
