package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.sparkgate.call.Pipeline;
import io.sparkgate.call.Stage;
import io.sparkgate.config.AuditConfig;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.ProxyRegistry;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.head.HeadStage;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.FakeSparkConnect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class AuditStageTest {
  @TempDir Path dir;

  private static final String SESSION = "2b1e9b4c-1111-4a6e-9d3c-3e3b6f1c2a10";
  private static final String OPERATION = "8c0e7d8e-2222-4a6e-9d3c-3e3b6f1c2a10";

  /** The proxy's stages as Sparkgate assembles them without a policy, with {@code stage} last. */
  private static Pipeline stages(AuditStage audit, Stage stage) {
    return Pipeline.of(audit, new HeadStage(AuthConfig.disabled()), stage);
  }

  private List<JsonNode> runAndReadAudit(FakeSparkConnect backend, Stage stage, Runnable calls)
      throws Exception {
    AuditConfig cfg =
        new AuditConfig(
            true,
            Optional.of(dir.resolve("audit.jsonl")),
            1L << 30,
            Duration.ofDays(1),
            1000,
            AuditConfig.Fsync.BATCH,
            AuditConfig.DEFAULT_FSYNC_INTERVAL,
            false,
            false);
    AuditLog auditLog = AuditLog.open(cfg, Clock.systemUTC());
    String backendName = InProcessServerBuilder.generateName();
    Server backendServer =
        InProcessServerBuilder.forName(backendName)
            .fallbackHandlerRegistry(backend)
            .build()
            .start();
    ManagedChannel backendChannel = InProcessChannelBuilder.forName(backendName).build();
    String proxyName = InProcessServerBuilder.generateName();
    Server proxy =
        InProcessServerBuilder.forName(proxyName)
            .fallbackHandlerRegistry(
                new ProxyRegistry(
                    backendChannel,
                    null,
                    stages(new AuditStage(auditLog, Clock.systemUTC()), stage)))
            .build()
            .start();
    client = InProcessChannelBuilder.forName(proxyName).build();
    try {
      calls.run();
      // The record of a cancelled call is written by a callback that may still be queued.
      Await.until("the call's audit record", () -> auditLog.written() >= 1);
    } finally {
      client.shutdownNow();
      proxy.shutdown().awaitTermination(5, TimeUnit.SECONDS);
      backendChannel.shutdownNow();
      backendServer.shutdownNow();
      auditLog.close();
    }
    ObjectMapper json = new ObjectMapper();
    return Files.readAllLines(dir.resolve("audit.jsonl")).stream()
        .map(
            line -> {
              try {
                return json.readTree(line);
              } catch (Exception e) {
                throw new AssertionError(e);
              }
            })
        .toList();
  }

  private ManagedChannel client;

  private static final Stage PASS = call -> CallHook.PASS_THROUGH;

  private static String[] json(JsonNode array) {
    String[] out = new String[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asText();
    }
    return out;
  }

  private static byte[] executeRequest() {
    return ExecutePlanRequest.newBuilder()
        .setSessionId(SESSION)
        .setOperationId(OPERATION)
        .setClientType("_SPARK_CONNECT_SCALA spark/4.0.0")
        .setPlan(
            Plan.newBuilder()
                .setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery("SELECT 1"))))
        .build()
        .toByteArray();
  }

  @Test
  void executePlan_recordHasIdsRowsSizesAndStatus() throws Exception {
    FakeSparkConnect backend = new FakeSparkConnect();
    backend.streamCount = 4;
    backend.streamMessage =
        n ->
            ExecutePlanResponse.newBuilder()
                .setSessionId(SESSION)
                .setOperationId(OPERATION)
                .setServerSideSessionId("server-side-1")
                .setArrowBatch(
                    ExecutePlanResponse.ArrowBatch.newBuilder()
                        .setRowCount(250)
                        .setData(ByteString.copyFrom(new byte[100])))
                .build()
                .toByteArray();
    List<JsonNode> records =
        runAndReadAudit(
            backend,
            PASS,
            () -> {
              Iterator<byte[]> it =
                  ClientCalls.blockingServerStreamingCall(
                      client,
                      TestMethods.get("ExecutePlan"),
                      CallOptions.DEFAULT,
                      executeRequest());
              it.forEachRemaining(b -> {});
            });

    assertEquals(1, records.size());
    JsonNode r = records.get(0);
    assertEquals("ExecutePlan", r.get("rpc").asText());
    assertEquals(SESSION, r.get("session_id").asText());
    assertEquals(OPERATION, r.get("operation_id").asText());
    assertEquals("_SPARK_CONNECT_SCALA spark/4.0.0", r.get("client_type").asText());
    assertEquals("server-side-1", r.get("response_server_side_session_id").asText());
    assertEquals("OK", r.get("status").asText());
    assertEquals(1000, r.get("result_rows").asLong());
    assertEquals(4, r.get("messages_out").asLong());
    assertEquals(executeRequest().length, r.get("bytes_in").asLong());
    assertEquals(HashChain.sha256Hex(executeRequest()), r.get("request_sha256").asText());
    assertTrue(r.get("seq").asLong() == 1 && r.has("prev") && r.has("time") && r.has("request_id"));
    String time = r.get("time").asText();
    assertEquals(Instant.parse(time).toString(), time, "the time in Instant's own ISO-8601 form");
    assertEquals(4, UUID.fromString(r.get("request_id").asText()).version(), "a random UUID");
  }

  /**
   * Records are built by the writer after the call: a large first request is hashed at once instead of being
   * held, and what a stage records after the call ended (here in its hook's onClose) stays out.
   */
  @Test
  void largeRequestReadAtOnce_lateEvidenceIgnored() throws Exception {
    byte[] large =
        ExecutePlanRequest.newBuilder()
            .setSessionId(SESSION)
            .setOperationId(OPERATION)
            .setPlan(
                Plan.newBuilder()
                    .setRoot(
                        Relation.newBuilder()
                            .setSql(
                                SQL.newBuilder()
                                    .setQuery("SELECT 1 /* " + "x".repeat(100_000) + " */"))))
            .build()
            .toByteArray();
    Stage late =
        call ->
            new CallHook() {
              @Override
              public byte[] onRequest(byte[] message) {
                call.audit().auditRule("seen");
                return message;
              }

              @Override
              public void onClose(Status status) {
                call.audit().auditRule("after the end");
              }
            };
    List<JsonNode> records =
        runAndReadAudit(
            new FakeSparkConnect(),
            late,
            () ->
                ClientCalls.blockingServerStreamingCall(
                        client, TestMethods.get("ExecutePlan"), CallOptions.DEFAULT, large)
                    .forEachRemaining(b -> {}));

    JsonNode r = records.get(0);
    assertEquals(SESSION, r.get("session_id").asText());
    assertEquals(HashChain.sha256Hex(large), r.get("request_sha256").asText());
    assertEquals(large.length, r.get("bytes_in").asLong());
    assertEquals(List.of("seen"), List.of(json(r.get("audit_rules"))), r.toString());
  }

  @Test
  void refusedCall_recordedWithStatusAndEvidence() throws Exception {
    Stage refuse =
        call ->
            new CallHook() {
              @Override
              public byte[] onRequest(byte[] message) throws StatusException {
                call.decided("deny", "no-user-code");
                throw Status.PERMISSION_DENIED.withDescription("refused").asException();
              }
            };
    List<JsonNode> records =
        runAndReadAudit(
            new FakeSparkConnect(),
            refuse,
            () ->
                assertThrows(
                    StatusRuntimeException.class,
                    () ->
                        ClientCalls.blockingServerStreamingCall(
                                client,
                                TestMethods.get("ExecutePlan"),
                                CallOptions.DEFAULT,
                                executeRequest())
                            .hasNext()));

    JsonNode r = records.get(0);
    assertEquals("PERMISSION_DENIED", r.get("status").asText());
    assertEquals("deny", r.get("decision").asText());
    assertEquals("no-user-code", r.get("rule").asText());
    assertEquals(SESSION, r.get("session_id").asText());
  }

  @Test
  void quotaRefusal_recordsTheQuota() throws Exception {
    Stage quota =
        call ->
            new CallHook() {
              @Override
              public byte[] onRequest(byte[] message) throws StatusException {
                call.audit().quota("per_principal.concurrent_operations");
                call.audit().refusal("[SPARKGATE_QUOTA_EXCEEDED] ... SQLSTATE: 53400");
                throw Status.RESOURCE_EXHAUSTED.withDescription("over quota").asException();
              }
            };
    List<JsonNode> records =
        runAndReadAudit(
            new FakeSparkConnect(),
            quota,
            () ->
                assertThrows(
                    StatusRuntimeException.class,
                    () ->
                        ClientCalls.blockingServerStreamingCall(
                                client,
                                TestMethods.get("ExecutePlan"),
                                CallOptions.DEFAULT,
                                executeRequest())
                            .hasNext()));

    JsonNode r = records.get(0);
    assertEquals("RESOURCE_EXHAUSTED", r.get("status").asText());
    assertEquals("per_principal.concurrent_operations", r.get("quota").asText());
    assertEquals("[SPARKGATE_QUOTA_EXCEEDED] ... SQLSTATE: 53400", r.get("refusal").asText());
  }

  @Test
  void anAdmittedCall_hasNoQuotaField() throws Exception {
    List<JsonNode> records =
        runAndReadAudit(
            new FakeSparkConnect(),
            PASS,
            () ->
                ClientCalls.blockingServerStreamingCall(
                        client,
                        TestMethods.get("ExecutePlan"),
                        CallOptions.DEFAULT,
                        executeRequest())
                    .forEachRemaining(b -> {}));
    assertEquals(null, records.get(0).get("quota"), records.get(0).toString());
  }

  @Test
  void sparkErrorMessage_keepsErrorClassAndSqlState_notTheQuotedData() throws Exception {
    FakeSparkConnect backend = new FakeSparkConnect();
    backend.failWith =
        Status.INTERNAL.withDescription(
            "[CAST_INVALID_INPUT] The value 'secret-4711' of the type "
                + "\"STRING\" cannot be cast to \"INT\" because it is malformed. SQLSTATE: 22018");
    List<JsonNode> records =
        runAndReadAudit(
            backend,
            PASS,
            () ->
                assertThrows(
                    StatusRuntimeException.class,
                    () ->
                        ClientCalls.blockingServerStreamingCall(
                                client,
                                TestMethods.get("ExecutePlan"),
                                CallOptions.DEFAULT,
                                executeRequest())
                            .hasNext()));
    assertEquals(
        "[CAST_INVALID_INPUT] SQLSTATE: 22018", records.get(0).get("status_message").asText());
  }

  @Test
  void auditRequired_logNotAccepting_callRefusedUnavailable_backendNotContacted() throws Exception {
    AuditConfig cfg =
        new AuditConfig(
            true,
            Optional.of(dir.resolve("required.jsonl")),
            1L << 30,
            Duration.ofDays(1),
            1,
            AuditConfig.Fsync.BATCH,
            AuditConfig.DEFAULT_FSYNC_INTERVAL,
            true,
            false);
    AuditLog auditLog = AuditLog.open(cfg, Clock.systemUTC());
    auditLog.close(); // a log that takes no more records, as when its queue is full
    FakeSparkConnect backend = new FakeSparkConnect();
    String backendName = InProcessServerBuilder.generateName();
    Server backendServer =
        InProcessServerBuilder.forName(backendName)
            .fallbackHandlerRegistry(backend)
            .build()
            .start();
    ManagedChannel backendChannel = InProcessChannelBuilder.forName(backendName).build();
    String proxyName = InProcessServerBuilder.generateName();
    AuditStage audit = new AuditStage(auditLog, Clock.systemUTC());
    Server proxy =
        InProcessServerBuilder.forName(proxyName)
            .fallbackHandlerRegistry(new ProxyRegistry(backendChannel, null, stages(audit, PASS)))
            .build()
            .start();
    ManagedChannel channel = InProcessChannelBuilder.forName(proxyName).build();
    try {
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () ->
                  ClientCalls.blockingServerStreamingCall(
                          channel,
                          TestMethods.get("ExecutePlan"),
                          CallOptions.DEFAULT,
                          executeRequest())
                      .hasNext());
      assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
      assertEquals(1, audit.refusedUnaudited());
      assertEquals(null, backend.lastMethod.get(), "an unaudited call reached the backend");
    } finally {
      channel.shutdownNow();
      proxy.shutdownNow();
      backendChannel.shutdownNow();
      backendServer.shutdownNow();
    }
  }

  @Test
  void clientCancel_recordedAsCancelled() throws Exception {
    FakeSparkConnect backend = new FakeSparkConnect();
    backend.streamCount = Integer.MAX_VALUE;
    List<JsonNode> records =
        runAndReadAudit(
            backend,
            PASS,
            () -> {
              io.grpc.Context.CancellableContext ctx = io.grpc.Context.current().withCancellation();
              ctx.run(
                  () -> {
                    Iterator<byte[]> it =
                        ClientCalls.blockingServerStreamingCall(
                            client,
                            TestMethods.get("ExecutePlan"),
                            CallOptions.DEFAULT,
                            executeRequest());
                    it.next();
                    ctx.cancel(null);
                  });
              try {
                assertTrue(backend.streamCancelled.await(30, TimeUnit.SECONDS));
              } catch (InterruptedException e) {
                throw new AssertionError(e);
              }
            });
    assertEquals("CANCELLED", records.get(0).get("status").asText());
  }
}
