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
    SessionTracker tracker = new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker);
    tracker.observe("u", "s", inspector.inspectSql("USE iceberg.lake", tracker.view("u", "s")));
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
    SessionTracker tracker = new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker);
    tracker.observe(
        "u",
        "s",
        Facts.of(
            List.of(
                new Fact(
                    Fact.Kind.CATALOG_OP,
                    "set_current_catalog",
                    Map.of("catalog_name", "iceberg")))));
    tracker.observe(
        "u",
        "s",
        Facts.of(
            List.of(
                new Fact(
                    Fact.Kind.CATALOG_OP, "set_current_database", Map.of("db_name", "lake")))));
    assertEquals("iceberg", tracker.view("u", "s").currentCatalog());
    assertEquals("lake", tracker.view("u", "s").currentDatabase());
    tracker.observe(
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
    SessionTracker tracker = new SessionTracker(() -> profile, Duration.ofMinutes(30), ticker);
    tracker.observe(
        "u",
        "s",
        inspector.inspectSql(
            "CREATE TEMPORARY FUNCTION Plus1(x INT) RETURNS INT RETURN x + 1",
            tracker.view("u", "s")));
    tracker.observe(
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
