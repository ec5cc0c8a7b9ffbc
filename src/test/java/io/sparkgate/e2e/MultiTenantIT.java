package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Any;
import com.google.rpc.RetryInfo;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.sparkgate.Sparkgate;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import io.sparkgate.proto.spark.InterruptRequest;
import io.sparkgate.proto.spark.InterruptResponse;
import io.sparkgate.proto.spark.ReattachExecuteRequest;
import io.sparkgate.proto.spark.ReattachOptions;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.RedisServer;
import io.sparkgate.testing.TcpRelay;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Several Spark servers behind two Sparkgate replicas sharing a Redis session registry, all real: the shared
 * Spark 4.0 server (S1) and one of this class's own (S2) in pool {@code analytics}, a relay to S2 as pool
 * {@code lake} with a policy of its own, a relay to S1 as pool {@code teams} with data access grants (a copy
 * of policies/team-data.yaml per replica), static tokens carrying principals and groups, the real JVM client
 * and raw gRPC. A session must live on one backend whichever replica a client reaches, survive replica
 * restarts and pool changes, and never be sent to a backend that does not hold it, even while Redis or a
 * backend is down.
 *
 * <p>The tests run in order and share the fleet: the later ones restart the replicas, stop Redis and kill
 * S2 (last).
 */
@ExtendWith(SparkServerExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MultiTenantIT {
  private static final String ALICE = "mt-alice-" + UUID.randomUUID();
  private static final String LAKE = "mt-lake-" + UUID.randomUUID();
  private static final String NOBODY = "mt-nobody-" + UUID.randomUUID();
  private static final String FINANCE = "mt-finance-" + UUID.randomUUID(); // fay, group finance
  private static final String MARKETING = "mt-marketing-" + UUID.randomUUID(); // mark, marketing
  private static final String RITA = "mt-rita-" + UUID.randomUUID(); // revoked in test 4
  private static final String ADMIN_TOKEN = "mt-admin-" + UUID.randomUUID();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration SESSION_LOST_AFTER = Duration.ofSeconds(20);

  /** Development only: {@code -Dsparkgate.mt.store=memory} runs without Redis (tests 5 and 6 skip). */
  private static final boolean REDIS =
      !"memory".equals(System.getProperty("sparkgate.mt.store", "redis"));

  private static SparkConnectServerProcess s1;
  private static SparkConnectServerProcess s2;
  private static TcpRelay lakeRelay; // pool lake's backend: S2 under another address
  private static TcpRelay
      thirdRelay; // analytics' third backend from test 5 on: S1 under another address
  private static TcpRelay teamsRelay; // pool teams' backend: S1 under another address
  private static RedisServer redis;
  private static Path dir;
  private static Sparkgate replica1;
  private static Sparkgate replica2;
  private static final List<SparkSession> clients = new ArrayList<>();

  /** Sessions of alice with a temp view {@code mt_view} (answer: the value), by session id. */
  private static final Map<String, Long> viewSessions = new LinkedHashMap<>();

  @BeforeAll
  static void start(SparkConnectServerProcess shared) throws Exception {
    s1 = shared;
    dir = ProxyConfigs.freshDir("multi-tenant");
    Path classpath =
        Path.of(
            System.getProperty(
                SparkServerExtension.CLASSPATH_PROPERTY, "target/spark-server.classpath"));
    s2 =
        SparkConnectServerProcess.start(
            classpath, dir.resolve("s2"), SparkServerExtension.SHARED_CONF);
    lakeRelay = new TcpRelay(s2.port());
    thirdRelay = new TcpRelay(s1.port());
    teamsRelay = new TcpRelay(s1.port());
    if (REDIS) {
      redis = RedisServer.start(dir.resolve("redis"));
    }
    Files.writeString(
        dir.resolve("lake-policy.yaml"),
        String.join(
            "\n",
            "default: allow",
            "rules:",
            "  - name: lake-no-upper",
            "    description: what the lake pool refuses and the analytics pool allows",
            "    effect: deny",
            "    when:",
            "      fact: FUNCTION_CALL",
            "      attr:",
            "        name: [upper]",
            "    message: \"upper() is not served by the lake pool.\"",
            ""));
    startReplicas(List.of(s1.port(), s2.port()));
  }

  /**
   * Both replicas on the same configuration (listening on ports of their own), analytics on {@code ports}.
   * Each replica reads it from a directory of its own, where the relative names in it point: pool teams'
   * policy (a copy of policies/team-data.yaml, so that a test can revoke a grant on one replica) and the
   * audit log.
   */
  private static void startReplicas(List<Integer> analytics) throws Exception {
    List<String> backends = analytics.stream().map(p -> "'127.0.0.1:" + p + "'").toList();
    String[] lines = {
      ProxyConfigs.PLAINTEXT_LISTENER,
      "auth:",
      "  static_tokens:",
      "    - {sha256: " + sha256(ALICE) + ", principal: alice, groups: [analysts]}",
      "    - {sha256: " + sha256(LAKE) + ", principal: lakeuser, groups: [lake-x]}",
      "    - {sha256: " + sha256(NOBODY) + ", principal: nobody, groups: [others]}",
      "    - {sha256: " + sha256(FINANCE) + ", principal: fay, groups: [finance]}",
      "    - {sha256: " + sha256(MARKETING) + ", principal: mark, groups: [marketing]}",
      "    - {sha256: " + sha256(RITA) + ", principal: rita, groups: [analysts]}",
      "pools:",
      "  analytics:",
      "    backends: [" + String.join(", ", backends) + "]",
      "    policy: '" + Path.of("policies", "shared-server.yaml").toAbsolutePath() + "'",
      "  lake:",
      "    backends: ['127.0.0.1:" + lakeRelay.port() + "']",
      "    policy: '" + dir.resolve("lake-policy.yaml") + "'",
      "  teams:",
      "    backends: ['127.0.0.1:" + teamsRelay.port() + "']",
      "    policy: team-data.yaml",
      "routes:",
      "  - match: {groups: ['lake-*']}",
      "    pool: lake",
      "  - match: {groups: [finance, marketing]}",
      "    pool: teams",
      "  - match: {principals: [alice, bob, rita]}",
      "    pool: analytics",
      REDIS
          ? "sessions: {store: redis, redis_url: '" + redis.url() + "', idle_timeout: 1h}"
          : "sessions: {store: memory, idle_timeout: 1h}",
      "health: {interval: 1s, timeout: 1s, session_lost_after: "
          + SESSION_LOST_AFTER.toSeconds()
          + "s}",
      "audit: {file: audit.jsonl, fsync: batch}",
      "admin: {address: 127.0.0.1, port: 0, token_file: admin.token}"
    };
    for (String replica : List.of("replica1", "replica2")) {
      Files.createDirectories(dir.resolve(replica));
      Path token = dir.resolve(replica).resolve("admin.token");
      Files.writeString(token, ADMIN_TOKEN);
      Files.setPosixFilePermissions(
          token, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
      Files.writeString(dir.resolve(replica).resolve("team-data.yaml"), teamData());
    }
    replica1 = Sparkgate.start(ProxyConfigs.write(dir.resolve("replica1"), lines));
    replica2 = Sparkgate.start(ProxyConfigs.write(dir.resolve("replica2"), lines));
  }

  /** The shipped policies/team-data.yaml, its include pointing at the shipped shared-server.yaml. */
  private static String teamData() throws Exception {
    String text = Files.readString(Path.of("policies", "team-data.yaml"));
    String include = "  - include: shared-server.yaml\n";
    assertTrue(text.contains(include), "team-data.yaml includes shared-server.yaml");
    return text.replace(
        include,
        "  - include: '" + Path.of("policies", "shared-server.yaml").toAbsolutePath() + "'\n");
  }

  @AfterAll
  static void stop() throws Exception {
    for (SparkSession c : clients) {
      try {
        c.close();
      } catch (Throwable ignored) {
        // its replica is gone (restarted): nothing to release through it
      }
    }
    ProxyConfigs.closeAll(replica1, replica2, lakeRelay, thirdRelay, teamsRelay, redis, s2);
  }

  // ---- 1
  // ----------------------------------------------------------------------------------------------

  @Test
  @Order(1)
  void oneSessionThroughBothReplicas_keepsItsState() throws Exception {
    String session = UUID.randomUUID().toString();
    SparkSession viaOne = client(replica1, ALICE, session);
    SparkSession viaTwo = client(replica2, ALICE, session);

    viaOne.sql("CREATE TEMP VIEW mt_view AS SELECT 101L AS answer");
    assertEquals(101L, viaTwo.table("mt_view").collectAsList().get(0).getLong(0));

    viaTwo.sql("CREATE TEMP VIEW mt_other AS SELECT 'two' AS s");
    assertEquals("two", viaOne.table("mt_other").collectAsList().get(0).getString(0));
    // Back and forth a few times: every call lands on the same server session.
    for (int i = 0; i < 3; i++) {
      assertEquals(101L, viaOne.table("mt_view").collectAsList().get(0).getLong(0));
      assertEquals("two", viaTwo.table("mt_other").collectAsList().get(0).getString(0));
    }
    assertEquals(1, on(session, "mt_view").size(), "the session lives on exactly one backend");
    viewSessions.put(session, 101L);
  }

  /**
   * What the policy reads in a session's state holds whichever replica a call reaches: a temporary function
   * created through one replica is the session's own through the other (not a built-in the allowlist refuses),
   * and a DataFrame persisted through one is the session's to unpersist through the other, and not another
   * session's through either.
   */
  @Test
  @Order(1)
  void sessionStateThePolicyReads_isSharedByTheReplicas() throws Exception {
    String session = UUID.randomUUID().toString();
    SparkSession viaOne = client(replica1, ALICE, session);
    SparkSession viaTwo = client(replica2, ALICE, session);
    SparkSession other = client(replica2, ALICE, UUID.randomUUID().toString());

    // No parameters: Iceberg's parser (loaded by S1) cannot read a SQL function's parameters.
    viaOne.sql("CREATE TEMPORARY FUNCTION mt_answer() RETURNS INT RETURN 42");
    assertEquals(42, viaTwo.sql("SELECT mt_answer()").collectAsList().get(0).getInt(0));
    Exception notTheirs =
        assertThrows(Exception.class, () -> other.sql("SELECT mt_answer()").collectAsList());
    assertTrue(notTheirs.getMessage().contains("SPARKGATE_POLICY_DENIED"), notTheirs.getMessage());

    var mine = viaOne.range(7).selectExpr("id * 7 AS mt_cached");
    mine.persist();
    assertEquals(7, mine.count());
    Exception dropped =
        assertThrows(
            Exception.class,
            () -> other.range(7).selectExpr("id * 7 AS mt_cached").unpersist(true));
    assertTrue(
        dropped.getMessage().contains("rule 'no-shared-cache-ops'"),
        "another session's entry: " + dropped.getMessage());
    viaTwo.range(7).selectExpr("id * 7 AS mt_cached").unpersist(true); // the session's own
  }

  // ---- 2
  // ----------------------------------------------------------------------------------------------

  @Test
  @Order(2)
  void operationStartedOnOneReplica_reattachedAndInterruptedThroughTheOther() throws Exception {
    String session = UUID.randomUUID().toString();
    String operation = UUID.randomUUID().toString();
    ManagedChannel one = channel(replica1, ALICE);
    ManagedChannel two = channel(replica2, ALICE);
    long reattachesBefore = s1.reattachCount() + s2.reattachCount();
    try {
      // Some 20 s of hashing, a small batch per partition: the operation is still running long
      // after the first responses, and the servers hold little of it in memory.
      ExecutePlanRequest slow =
          ConnectRequests.sqlRequest(
                  session,
                  "alice",
                  "SELECT id, sha2(repeat(CAST(id AS STRING), 2000), 512) AS h"
                      + " FROM range(0, 1000000, 1, 400)")
              .toBuilder()
              .setOperationId(operation)
              .addRequestOptions(
                  ExecutePlanRequest.RequestOption.newBuilder()
                      .setReattachOptions(ReattachOptions.newBuilder().setReattachable(true)))
              .build();
      // The servers cut every response stream after 1 s: until rows came, carry on through
      // replica 1 with ReattachExecute, as the client would.
      ClientCall<byte[], byte[]> first =
          one.newCall(
              method("ExecutePlan"), CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.MINUTES));
      Iterator<byte[]> stream = ClientCalls.blockingServerStreamingCall(first, slow.toByteArray());
      List<String> seen = new ArrayList<>();
      long rowsFirst = 0;
      for (int streams = 1; rowsFirst == 0 || seen.size() < 2; ) {
        if (!stream.hasNext()) {
          assertTrue(++streams <= 30, "no rows after " + streams + " streams");
          ReattachExecuteRequest.Builder again =
              reattach(session, operation, seen.isEmpty() ? "" : seen.get(seen.size() - 1))
                  .toBuilder();
          if (seen.isEmpty()) again.clearLastResponseId();
          first =
              one.newCall(
                  method("ReattachExecute"),
                  CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.MINUTES));
          stream = ClientCalls.blockingServerStreamingCall(first, again.build().toByteArray());
          continue;
        }
        ExecutePlanResponse r = ExecutePlanResponse.parseFrom(stream.next());
        assertFalse(r.hasResultComplete(), "the operation completed too soon");
        assertEquals(operation, r.getOperationId());
        seen.add(r.getResponseId());
        rowsFirst += r.getArrowBatch().getRowCount();
      }
      first.cancel("the client moves to the other replica", null);

      // Resumed through replica 2, after the last response read.
      Iterator<byte[]> resumed =
          ClientCalls.blockingServerStreamingCall(
              two,
              method("ReattachExecute"),
              CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.MINUTES),
              reattach(session, operation, seen.get(seen.size() - 1)).toByteArray());
      long rowsResumed = 0;
      String last = seen.get(seen.size() - 1);
      for (int streams = 1; rowsResumed == 0; ) {
        if (!resumed.hasNext()) {
          assertTrue(++streams <= 30, "no rows after " + streams + " reattached streams");
          resumed =
              ClientCalls.blockingServerStreamingCall(
                  two,
                  method("ReattachExecute"),
                  CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.MINUTES),
                  reattach(session, operation, last).toByteArray());
          continue;
        }
        ExecutePlanResponse r = ExecutePlanResponse.parseFrom(resumed.next());
        assertFalse(
            seen.contains(r.getResponseId()), "a response sent again: " + r.getResponseId());
        assertEquals(operation, r.getOperationId());
        rowsResumed += r.getArrowBatch().getRowCount();
        last = r.getResponseId();
      }
      assertTrue(
          s1.reattachCount() + s2.reattachCount() > reattachesBefore,
          "a backend resumed the stream past its start");

      // Interrupted through replica 2 too: the backend holding the session finds the operation.
      InterruptResponse interrupted =
          InterruptResponse.parseFrom(
              ClientCalls.blockingUnaryCall(
                  two,
                  method("Interrupt"),
                  CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
                  InterruptRequest.newBuilder()
                      .setSessionId(session)
                      .setUserContext(UserContext.newBuilder().setUserId("alice"))
                      .setInterruptType(InterruptRequest.InterruptType.INTERRUPT_TYPE_OPERATION_ID)
                      .setOperationId(operation)
                      .build()
                      .toByteArray()));
      assertEquals(List.of(operation), interrupted.getInterruptedIdsList());

      // The reattached stream ends with the interruption (or, when the server had just cut it, the
      // next reattachment does).
      String ending = null;
      for (int attempt = 0; attempt < 5 && ending == null; attempt++) {
        try {
          while (resumed.hasNext()) {
            ExecutePlanResponse r = ExecutePlanResponse.parseFrom(resumed.next());
            assertFalse(r.hasResultComplete(), "the interrupted operation completed");
            last = r.getResponseId();
          }
          resumed =
              ClientCalls.blockingServerStreamingCall(
                  two,
                  method("ReattachExecute"),
                  CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.MINUTES),
                  reattach(session, operation, last).toByteArray());
        } catch (StatusRuntimeException e) {
          ending = e.getStatus().toString();
        }
      }
      assertTrue(
          ending != null
              && (ending.contains("OPERATION_CANCELED")
                  || ending.contains("INVALID_HANDLE.OPERATION_NOT_FOUND")
                  || ending.contains("INVALID_HANDLE.OPERATION_ABANDONED")),
          "the operation's end: " + ending);
      System.out.println("MultiTenantIT: the interrupted operation ended with " + ending);
    } finally {
      // Whatever happened, the operation must not keep the backend's two cores from the next tests.
      for (SparkConnectServerProcess s : List.of(s1, s2)) {
        ManagedChannel direct = Channels.plaintext(s.port()).build();
        try {
          ClientCalls.blockingUnaryCall(
              direct,
              method("Interrupt"),
              CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
              InterruptRequest.newBuilder()
                  .setSessionId(session)
                  .setUserContext(UserContext.newBuilder().setUserId("alice"))
                  .setInterruptType(InterruptRequest.InterruptType.INTERRUPT_TYPE_ALL)
                  .build()
                  .toByteArray());
        } catch (StatusRuntimeException ignored) {
          // no such session there
        } finally {
          direct.shutdownNow();
        }
      }
      one.shutdownNow();
      two.shutdownNow();
    }
  }

  // ---- 3
  // ----------------------------------------------------------------------------------------------

  @Test
  @Order(3)
  void routes_byGroupAndPrincipal_eachPoolItsPolicy_unroutedRefused() throws Exception {
    // lakeuser (group lake-x) is served by pool lake, whose policy refuses upper().
    StatusRuntimeException lake =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                sql(replica1, LAKE, "lakeuser", UUID.randomUUID().toString(), "SELECT upper('a')"));
    assertEquals(Status.Code.PERMISSION_DENIED, lake.getStatus().getCode());
    assertTrue(
        lake.getStatus().getDescription().contains("rule 'lake-no-upper'"),
        lake.getStatus().toString());
    // ... and what its policy does not refuse runs there.
    String lakeSession = UUID.randomUUID().toString();
    assertEquals(
        List.of(List.<Object>of(7L)), sql(replica2, LAKE, "lakeuser", lakeSession, "SELECT 7L"));

    // alice is served by analytics: upper() is fine, reflect() is refused by its rule.
    assertEquals(
        List.of(List.<Object>of("A")),
        sql(replica1, ALICE, "alice", UUID.randomUUID().toString(), "SELECT upper('a')"));
    StatusRuntimeException analytics =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                sql(
                    replica2,
                    ALICE,
                    "alice",
                    UUID.randomUUID().toString(),
                    "SELECT reflect('java.lang.String', 'valueOf', 1)"));
    assertEquals(Status.Code.PERMISSION_DENIED, analytics.getStatus().getCode());
    assertTrue(
        analytics.getStatus().getDescription().contains("rule 'no-reflection'"),
        analytics.getStatus().toString());

    // lakeuser's session is on S2 (the lake relay's server), with lakeuser's own user id.
    sql(replica1, LAKE, "lakeuser", lakeSession, "CREATE TEMP VIEW mt_lake AS SELECT 1 AS one");
    assertTrue(viewAt(s2, "lakeuser", lakeSession, "mt_lake"), "lakeuser's view on S2");
    assertFalse(viewAt(s1, "lakeuser", lakeSession, "mt_lake"), "lakeuser's view not on S1");

    // nobody has a valid token and no route.
    for (Sparkgate replica : List.of(replica1, replica2)) {
      StatusRuntimeException none =
          assertThrows(
              StatusRuntimeException.class,
              () -> sql(replica, NOBODY, "nobody", UUID.randomUUID().toString(), "SELECT 1"));
      assertEquals(Status.Code.PERMISSION_DENIED, none.getStatus().getCode());
      String text = none.getStatus().getDescription();
      assertTrue(text.contains("SPARKGATE_NO_ROUTE"), text);
      assertFalse(text.contains("analytics") || text.contains("lake"), "names a pool: " + text);
    }
  }

  /**
   * Data access grants across the replicas (pool teams, a copy of policies/team-data.yaml on each): fay
   * (finance) creates a table of her team's through replica 1 and a temporary view over it; through replica
   * 2 the same session reads the view, which replica 2 knows from the session state in Redis (a name it did
   * not know would read as the ungranted table {@code spark_catalog.default.<view>}, as it does in another
   * session), and is refused marketing's table. Then finance's grant on replica 2 is narrowed so that it no
   * longer covers the table: the view, rechecked at each read against the policy in force, is refused
   * through replica 2 naming the table under rule {@code data-access}, while replica 1, its grant intact,
   * still reads it. Replica 2's audit log has both reads with the table and their grant or refusal.
   */
  @Test
  @Order(3)
  void grantsAcrossReplicas_tempViewKnownToBoth_revokedOnOneIsRefusedThere() throws Exception {
    String ledger = "finance.mt_ledger_" + UUID.randomUUID().toString().substring(0, 8);
    String campaigns = "marketing.mt_campaigns";
    String ledgerFull = "spark_catalog." + ledger;
    // mark sets up his team's table through replica 2 (marketing's grant covers it, finance's does
    // not).
    String markSession = UUID.randomUUID().toString();
    for (String statement :
        List.of(
            "CREATE NAMESPACE IF NOT EXISTS marketing",
            "CREATE TABLE IF NOT EXISTS " + campaigns + " (id BIGINT) USING parquet")) {
      sql(replica2, MARKETING, "mark", markSession, statement);
    }

    String session = UUID.randomUUID().toString();
    SparkSession viaOne = client(replica1, FINANCE, session);
    SparkSession viaTwo = client(replica2, FINANCE, session);
    viaOne.sql("CREATE NAMESPACE IF NOT EXISTS finance");
    viaOne.sql("CREATE TABLE " + ledger + " (id BIGINT, amount BIGINT) USING parquet");
    viaOne.sql("INSERT INTO " + ledger + " VALUES (1, 10), (2, 20)");
    viaOne.sql("CREATE TEMP VIEW mt_ledger_view AS SELECT id, amount FROM " + ledger);

    String read = "SELECT sum(amount) FROM mt_ledger_view";
    assertEquals(30L, viaTwo.sql(read).collectAsList().get(0).getLong(0));
    assertDataDenied(
        () -> viaTwo.sql("SELECT * FROM " + campaigns).collectAsList(),
        "spark_catalog." + campaigns);
    // In another session the name is no view: it reads as a table of the current namespace.
    SparkSession otherSession = client(replica2, FINANCE, UUID.randomUUID().toString());
    assertDataDenied(
        () -> otherSession.sql(read).collectAsList(), "spark_catalog.default.mt_ledger_view");

    // Revoked on replica 2: finance's grant now covers only an archive the ledger is not in.
    Path policy = dir.resolve("replica2").resolve("team-data.yaml");
    String granted = "tables: [\"spark_catalog.finance.*\", \"iceberg.finance.*\"]";
    String text = Files.readString(policy);
    assertTrue(text.contains(granted), "finance's grant in " + policy);
    Path next = dir.resolve("replica2").resolve("team-data.yaml.next");
    Files.writeString(next, text.replace(granted, "tables: [\"spark_catalog.finance.archive_*\"]"));
    Files.move(next, policy, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    Exception revoked =
        Await.value(
            "replica 2 reloading the revoked grant",
            () -> {
              try {
                viaTwo.sql(read).collectAsList();
                return null;
              } catch (Exception e) {
                return e;
              }
            },
            e -> e != null);
    assertDataDenied(
        () -> {
          throw revoked;
        },
        ledgerFull);
    assertFalse(
        revoked.getMessage().contains("mt_ledger_view"),
        "the refusal names the table the view read: " + revoked.getMessage());
    assertEquals(
        30L,
        viaOne.sql(read).collectAsList().get(0).getLong(0),
        "replica 1's policy still grants it");

    // Replica 2's audit log: fay's read of the view allowed by finance-team, then refused.
    Path audit = dir.resolve("replica2").resolve("audit.jsonl");
    List<JsonNode> reads =
        Await.value(
            "replica 2's records of fay's reads of " + ledgerFull,
            () -> {
              List<JsonNode> out = new ArrayList<>();
              for (String line : AuditLines.complete(audit)) {
                JsonNode r = JSON.readTree(line);
                if ("fay".equals(r.path("principal").asText())
                    && session.equals(r.path("session_id").asText())) {
                  for (JsonNode use : r.path("data_access")) {
                    if (ledgerFull.equals(use.path("table").asText())) out.add(r);
                  }
                }
              }
              return out;
            },
            out -> out.stream().anyMatch(r -> "deny".equals(r.path("decision").asText())));
    JsonNode allowed = reads.get(0);
    assertEquals("allow", allowed.path("decision").asText(), allowed.toString());
    assertTrue(
        allowed.path("data_access").toString().contains("\"grant\":\"finance-team\""),
        allowed.toString());
    JsonNode denied =
        reads.stream().filter(r -> "deny".equals(r.path("decision").asText())).findFirst().get();
    assertEquals("data-access", denied.path("rule").asText(), denied.toString());
    assertEquals("PERMISSION_DENIED", denied.path("status").asText(), denied.toString());
    JsonNode use = null;
    for (JsonNode u : denied.path("data_access")) {
      if (ledgerFull.equals(u.path("table").asText())) use = u;
    }
    assertEquals("select", use.path("privilege").asText(), denied.toString());
    assertTrue(use.path("refused").asBoolean(), denied.toString());
  }

  /** The call is refused by the grants: Spark's error form, SQLSTATE 42501, naming {@code table}. */
  private static void assertDataDenied(
      org.junit.jupiter.api.function.Executable call, String table) {
    Exception e = assertThrows(Exception.class, call);
    String message = String.valueOf(e.getMessage());
    System.out.println("MultiTenantIT: client shows (" + e.getClass().getName() + "): " + message);
    assertTrue(message.contains("SPARKGATE_POLICY_DENIED"), message);
    assertTrue(message.contains("rule 'data-access'"), message);
    assertTrue(message.contains("select on table " + table + "."), message);
    assertTrue(message.contains("SQLSTATE: 42501"), message);
  }

  // ---- 4
  // ----------------------------------------------------------------------------------------------

  /**
   * The kill switch across replicas: rita's long query runs through replica 2 when an operator revokes her
   * through replica 1. Replica 2 hears of it through Redis, interrupts the query and releases her session on
   * the backend; both replicas refuse her from then on, naming the revocation, while alice carries on. Both
   * audit logs name the operator. Restored through replica 2, rita is served again through replica 1, in a
   * new session: the old one is gone from the backend.
   */
  @Test
  @Order(3)
  void revokedThroughOneReplica_theOtherStopsHerRunningQuery_bothRefuseHer_untilRestored()
      throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(REDIS, "revocations are shared through Redis");
    String session = UUID.randomUUID().toString();
    SparkSession rita = client(replica2, RITA, session);
    assertEquals(1L, rita.sql("SELECT 1L").collectAsList().get(0).getLong(0));
    java.util.concurrent.CompletableFuture<Object> query =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () ->
                rita.sql(
                        "SELECT sum(length(sha2(repeat(CAST(id AS STRING), 2000), 512)))"
                            + " FROM range(0, 6000000, 1, 8)")
                    .collectAsList());
    Await.until(
        "rita's query running on replica 2",
        () -> admin(replica2, "GET", "/api/operations", null).toString().contains("\"rita\""));

    // The operator's command, the shipped jar's, through replica 1.
    long before = System.nanoTime();
    String said =
        sparkgate(
            "admin",
            "revoke",
            "--url",
            "http://127.0.0.1:" + replica1.adminPort(),
            "--token-file",
            dir.resolve("replica1").resolve("admin.token").toString(),
            "--principal",
            "rita",
            "--reason",
            "mt test: laptop lost");
    assertTrue(said.contains("rita") && said.contains("redis"), said);

    Exception ended =
        assertThrows(
            java.util.concurrent.ExecutionException.class,
            () -> query.get(30, TimeUnit.SECONDS),
            "the query through replica 2 was not stopped");
    long stoppedMillis = (System.nanoTime() - before) / 1_000_000;
    assertTrue(stoppedMillis < 20_000, "stopped after " + stoppedMillis + " ms");

    for (Sparkgate replica : List.of(replica1, replica2)) {
      StatusRuntimeException refused =
          assertThrows(
              StatusRuntimeException.class,
              () -> sql(replica, RITA, "rita", UUID.randomUUID().toString(), "SELECT 1"));
      assertEquals(Status.Code.PERMISSION_DENIED, refused.getStatus().getCode());
      assertTrue(
          refused.getStatus().getDescription().contains("access for 'rita' was revoked"),
          refused.getStatus().getDescription());
    }
    Exception realClient =
        assertThrows(Exception.class, () -> rita.sql("SELECT 2").collectAsList());
    assertTrue(String.valueOf(realClient.getMessage()).contains("revoked"), realClient.toString());
    assertEquals(
        List.of(List.of(3L)),
        sql(replica1, ALICE, "alice", UUID.randomUUID().toString(), "SELECT 3L"),
        "others carry on");

    JsonNode listed = admin(replica2, "GET", "/api/revocations", null);
    assertEquals("rita", listed.get("revoked").get(0).get("name").asText(), listed.toString());
    assertEquals("token", listed.get("revoked").get(0).get("operator").asText());
    Map<String, Object> revoke = auditRecord("replica1", "revoke", "principal:rita");
    assertEquals("token", revoke.get("operator"));
    assertEquals("mt test: laptop lost", revoke.get("reason"));
    Map<String, Object> release = auditRecord("replica2", "revoke-release", "session:" + session);
    assertEquals("token", release.get("operator"));
    assertEquals("rita", release.get("principal"));
    assertTrue(
        String.valueOf(release.get("outcome")).startsWith("interrupted "), release.toString());
    assertTrue(String.valueOf(release.get("outcome")).endsWith("released"), release.toString());
    assertFalse(
        admin(replica2, "GET", "/api/sessions", null).toString().contains(session),
        "replica 2 forgot the session");

    sparkgate(
        "admin",
        "restore",
        "--url",
        "http://127.0.0.1:" + replica2.adminPort(),
        "--token-file",
        dir.resolve("replica2").resolve("admin.token").toString(),
        "--principal",
        "rita");
    assertEquals(
        List.of(List.of(4L)),
        Await.value(
            "rita served again through replica 1",
            () -> {
              try {
                return sql(replica1, RITA, "rita", UUID.randomUUID().toString(), "SELECT 4L");
              } catch (StatusRuntimeException e) {
                return List.<List<Object>>of();
              }
            },
            rows -> !rows.isEmpty()));
    StatusRuntimeException gone =
        assertThrows(
            StatusRuntimeException.class,
            () -> sql(replica1, RITA, "rita", session, "SELECT 5"),
            "the released session is gone from the backend");
    assertTrue(
        String.valueOf(gone.getStatus().getDescription()).contains("SESSION_CLOSED")
            || String.valueOf(gone.getStatus().getDescription()).contains("SESSION"),
        gone.getStatus().toString());
    assertTrue(
        revokedOrNot(ended).contains("CANCEL") || revokedOrNot(ended).contains("revoked"),
        revokedOrNot(ended));
  }

  /** Runs the shipped jar's command line; its output, once it exited 0. */
  private static String sparkgate(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-jar");
    command.add(Path.of("target", "sparkgate.jar").toAbsolutePath().toString());
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "sparkgate " + String.join(" ", args));
    assertEquals(0, p.exitValue(), output);
    assertFalse(output.contains(ADMIN_TOKEN), "the token is never printed");
    return output;
  }

  /** The message chain of what ended the query, for the assertion's message. */
  private static String revokedOrNot(Throwable e) {
    StringBuilder b = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) b.append(t).append(" / ");
    return b.toString();
  }

  /** Asks a replica's admin API, as the operator with the admin token: the JSON answer of a 200. */
  private static JsonNode admin(Sparkgate replica, String method, String path, String body)
      throws Exception {
    java.net.http.HttpRequest.Builder r =
        java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + replica.adminPort() + path))
            .header("Authorization", "Bearer " + ADMIN_TOKEN);
    if (body != null) {
      r.header("Content-Type", "application/json")
          .method(method, java.net.http.HttpRequest.BodyPublishers.ofString(body));
    } else {
      r.method(method, java.net.http.HttpRequest.BodyPublishers.noBody());
    }
    java.net.http.HttpResponse<String> answer =
        java.net.http.HttpClient.newHttpClient()
            .send(r.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(200, answer.statusCode(), method + " " + path + ": " + answer.body());
    return JSON.readTree(answer.body());
  }

  /** The replica's audit record of an operator's {@code action} on {@code target}, once written. */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> auditRecord(String replica, String action, String target)
      throws Exception {
    Path file = dir.resolve(replica).resolve("audit.jsonl");
    return Await.value(
        replica + "'s audit record of " + action + " " + target,
        () -> {
          for (String line : AuditLines.complete(file)) {
            Map<String, Object> record = JSON.readValue(line, Map.class);
            if (action.equals(record.get("action")) && target.equals(record.get("target"))) {
              return record;
            }
          }
          return null;
        },
        r -> r != null);
  }

  @Test
  @Order(4)
  void newSessions_spreadOverThePool_eachOnExactlyOneBackend() throws Exception {
    int onS1 = 0;
    int onS2 = 0;
    for (int i = 0; i < 20; i++) {
      String session = UUID.randomUUID().toString();
      long answer = 1000 + i;
      sql(
          i % 2 == 0 ? replica1 : replica2,
          ALICE,
          "alice",
          session,
          "CREATE TEMP VIEW mt_view AS SELECT " + answer + "L AS answer");
      List<SparkConnectServerProcess> at = on(session, "mt_view");
      assertEquals(1, at.size(), "session " + i + " is on " + at);
      if (at.get(0) == s1) onS1++;
      else onS2++;
      viewSessions.put(session, answer);
    }
    System.out.println("MultiTenantIT: 20 new sessions, " + onS1 + " on S1, " + onS2 + " on S2");
    assertTrue(onS1 > 0 && onS2 > 0, "S1 " + onS1 + ", S2 " + onS2);
  }

  // ---- 5
  // ----------------------------------------------------------------------------------------------

  @Test
  @Order(5)
  void replicasRestartedWithABackendMore_placedSessionsStay() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(REDIS, "needs the Redis store");
    assertFalse(viewSessions.isEmpty(), "earlier tests left sessions");
    Map<String, List<SparkConnectServerProcess>> before = new LinkedHashMap<>();
    for (String session : viewSessions.keySet()) before.put(session, on(session, "mt_view"));
    replica1.close();
    replica2.close();
    // The third backend is S1 under another address: a session that moved to it would run on S1
    // without its view (if it lived on S2) or be counted twice.
    startReplicas(List.of(s1.port(), s2.port(), thirdRelay.port()));
    for (var e : viewSessions.entrySet()) {
      for (Sparkgate replica : List.of(replica1, replica2)) {
        assertEquals(
            List.of(List.<Object>of(e.getValue())),
            sql(replica, ALICE, "alice", e.getKey(), "SELECT answer FROM mt_view"),
            "session " + e.getKey());
      }
      assertEquals(before.get(e.getKey()), on(e.getKey(), "mt_view"), "session " + e.getKey());
    }
  }

  // ---- 6
  // ----------------------------------------------------------------------------------------------

  @Test
  @Order(6)
  void redisDown_everySessionRetryable_noneMisroutedOrMisread_thenBack() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(REDIS, "needs the Redis store");
    var cached = viewSessions.entrySet().iterator().next(); // used through both replicas in test 5
    // A session placed through replica 2 only, before the outage.
    String unseen = UUID.randomUUID().toString();
    sql(replica2, ALICE, "alice", unseen, "CREATE TEMP VIEW mt_view AS SELECT 606L AS answer");
    List<SparkConnectServerProcess> unseenAt = on(unseen, "mt_view");
    assertEquals(1, unseenAt.size());

    // The real JVM client, declaring a user_id of its own (the proxy stamps alice over it), in the
    // session test 1 created: replica 1 knows it as alice's, whatever the client declares.
    SparkSession jvm = client(replica1, ALICE, cached.getKey() + ";user_id=someone-else");
    assertEquals(cached.getValue(), jvm.table("mt_view").collectAsList().get(0).getLong(0));

    redis.stop();
    try {
      // A session replica 1 has placed: routed from memory, but its state (the current database,
      // temporary functions the policy reads) is in Redis, so it is not read from a stale copy.
      assertRetryable(
          () -> sql(replica1, ALICE, "alice", cached.getKey(), "SELECT answer FROM mt_view"),
          "SPARKGATE_SESSION_STATE_UNAVAILABLE");
      // Sessions replica 1 has not placed: not routed at all.
      for (String session : List.of(unseen, UUID.randomUUID().toString())) {
        assertRetryable(
            () -> sql(replica1, ALICE, "alice", session, "SELECT 1L"),
            "SPARKGATE_SESSION_REGISTRY_UNAVAILABLE");
      }
      assertEquals(unseenAt, on(unseen, "mt_view"), "nothing moved it");
    } finally {
      redis.start();
    }
    // Redis is back, empty: replica 1 places the session anew, by the same rendezvous over the same
    // healthy backends, so where replica 2 placed it.
    List<List<Object>> back =
        Await.value(
            "replica 1 serving the unseen session again",
            () -> {
              try {
                return sql(replica1, ALICE, "alice", unseen, "SELECT answer FROM mt_view");
              } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) throw e;
                return null;
              }
            },
            rows -> rows != null);
    assertEquals(List.of(List.<Object>of(606L)), back);
    assertEquals(unseenAt, on(unseen, "mt_view"), "its view lives on exactly one backend");
    assertEquals(
        cached.getValue(),
        jvm.table("mt_view").collectAsList().get(0).getLong(0),
        "the session replica 1 had placed carries on, on the same server session");
    // Each replica reconnects on its own schedule; the next test needs replica 2 back too.
    Await.value(
        "replica 2 reconnected to Redis",
        () -> {
          try {
            return sql(replica2, ALICE, "alice", UUID.randomUUID().toString(), "SELECT 1L");
          } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) throw e;
            return null;
          }
        },
        rows -> rows != null);
  }

  // ---- 7 (last: kills S2)
  // ------------------------------------------------------------------------------

  @Test
  @Order(7)
  void backendKilled_itsSessionsUnavailableThenLost_othersCarryOn_newOnesElsewhere()
      throws Exception {
    // One session known to be on S2 and one on S1, through replica 1.
    String onS2 = null;
    String onS1 = null;
    for (int i = 0; i < 40 && (onS1 == null || onS2 == null); i++) {
      String session = UUID.randomUUID().toString();
      sql(replica1, ALICE, "alice", session, "CREATE TEMP VIEW mt_view AS SELECT 7L AS answer");
      List<SparkConnectServerProcess> at = on(session, "mt_view");
      assertEquals(1, at.size());
      if (at.get(0) == s2 && onS2 == null) onS2 = session;
      if (at.get(0) == s1 && onS1 == null) onS1 = session;
    }
    assertTrue(onS1 != null && onS2 != null, "sessions on both backends");
    String s2Session = onS2;

    s2.stop();
    long killedAt = System.nanoTime();
    // (A memory store is one replica's own: replica 2 never heard of replica 1's sessions.)
    List<Sparkgate> knowing = REDIS ? List.of(replica1, replica2) : List.of(replica1);
    for (Sparkgate replica : knowing) {
      StatusRuntimeException down =
          Await.value(
              "SPARKGATE_BACKEND_UNAVAILABLE for a session of S2",
              () -> refusal(replica, s2Session, "alice"),
              e -> e.getStatus().getDescription().contains("SPARKGATE_BACKEND_UNAVAILABLE"));
      assertEquals(Status.Code.UNAVAILABLE, down.getStatus().getCode());
      assertTrue(hasRetryInfo(down), "RetryInfo");
      // Declaring another user_id changes nothing: the session is still alice's, on S2.
      StatusRuntimeException declared = refusal(replica, s2Session, "someone-else");
      assertTrue(
          declared.getStatus().getDescription().contains("SPARKGATE_BACKEND_UNAVAILABLE"),
          declared.getStatus().toString());
    }
    assertEquals(
        List.of(List.<Object>of(7L)),
        sql(replica2, ALICE, "alice", onS1, "SELECT answer FROM mt_view"),
        "S1's session carries on");
    for (int i = 0; i < 6; i++) {
      String session = UUID.randomUUID().toString();
      sql(
          i % 2 == 0 ? replica1 : replica2,
          ALICE,
          "alice",
          session,
          "CREATE TEMP VIEW mt_view AS SELECT 8L AS answer");
      assertTrue(viewAt(s1, "alice", session, "mt_view"), "new session " + i + " on S1");
    }

    StatusRuntimeException lost =
        Await.value(
            "SPARKGATE_SESSION_LOST for a session of S2",
            SESSION_LOST_AFTER.plusSeconds(30),
            () -> refusal(replica1, s2Session, "alice"),
            e -> e.getStatus().getCode() == Status.Code.FAILED_PRECONDITION);
    assertTrue(
        lost.getStatus().getDescription().contains("SPARKGATE_SESSION_LOST"), lost.toString());
    // Each replica counts from when it saw S2 down (its own probes, up to health.interval apart).
    StatusRuntimeException lostDeclared =
        Await.value(
            "SPARKGATE_SESSION_LOST with a declared user_id",
            Duration.ofSeconds(10),
            () -> refusal(knowing.get(knowing.size() - 1), s2Session, "someone-else"),
            e -> e.getStatus().getCode() != Status.Code.UNAVAILABLE);
    assertEquals(Status.Code.FAILED_PRECONDITION, lostDeclared.getStatus().getCode());
    assertTrue(
        lostDeclared.getStatus().getDescription().contains("SPARKGATE_SESSION_LOST"),
        lostDeclared.getStatus().toString());
    assertTrue(
        System.nanoTime() - killedAt >= SESSION_LOST_AFTER.toNanos(),
        "lost only after session_lost_after");
    assertEquals(
        List.of(List.<Object>of(7L)),
        sql(replica1, ALICE, "alice", onS1, "SELECT answer FROM mt_view"),
        "S1's session still carries on");
  }

  // ---- helpers
  // ------------------------------------------------------------------------------------------

  /**
   * The refusal of a request of alice's {@code session}, the client declaring {@code declared} as its
   * user_id (the proxy stamps alice over it: the session is alice's whatever the client declares).
   */
  private static StatusRuntimeException refusal(
      Sparkgate replica, String session, String declared) {
    try {
      sql(replica, ALICE, declared, session, "SELECT answer FROM mt_view");
    } catch (StatusRuntimeException e) {
      return e;
    }
    fail("a session of the killed backend was served");
    return null;
  }

  private static boolean hasRetryInfo(StatusRuntimeException e) {
    com.google.rpc.Status details = StatusProto.fromThrowable(e);
    return details != null
        && details.getDetailsList().stream().anyMatch(a -> a.is(RetryInfo.class));
  }

  private static ReattachExecuteRequest reattach(String session, String operation, String after) {
    return ReattachExecuteRequest.newBuilder()
        .setSessionId(session)
        .setOperationId(operation)
        .setLastResponseId(after)
        .setUserContext(UserContext.newBuilder().setUserId("alice"))
        .build();
  }

  /** The real JVM client through {@code replica}, in {@code session}; closed after the class. */
  /** The call fails with UNAVAILABLE of {@code errorClass}, with RetryInfo: every client retries it. */
  private static void assertRetryable(
      org.junit.jupiter.api.function.Executable call, String errorClass) throws Exception {
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call);
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
    assertTrue(e.getStatus().getDescription().contains(errorClass), e.getStatus().toString());
    com.google.rpc.Status details = StatusProto.fromThrowable(e);
    assertTrue(details != null, "no status details");
    RetryInfo retry = null;
    for (Any any : details.getDetailsList()) {
      if (any.is(RetryInfo.class)) retry = any.unpack(RetryInfo.class);
    }
    assertTrue(retry != null, "no RetryInfo in " + details);
    assertTrue(
        retry.getRetryDelay().getSeconds() > 0 || retry.getRetryDelay().getNanos() > 0,
        retry.toString());
  }

  private static SparkSession client(Sparkgate replica, String token, String session) {
    SparkSession s =
        SparkClients.connectFailFast(
            "sc://localhost:" + replica.port() + "/;token=" + token + ";session_id=" + session);
    clients.add(s);
    return s;
  }

  private static ManagedChannel channel(Sparkgate replica, String token) {
    return Channels.plaintext(replica.port()).intercept(Channels.bearer(token)).build();
  }

  /** Runs SQL through {@code replica} as the token's principal in {@code session}. */
  private static List<List<Object>> sql(
      Sparkgate replica, String token, String user, String session, String sql) {
    ManagedChannel ch = channel(replica, token);
    try {
      return new ConnectRequests(ch, user).execute(ConnectRequests.sqlRequest(session, user, sql));
    } finally {
      ch.shutdownNow();
    }
  }

  /** The analytics servers on which alice's {@code session} has {@code view}, asked directly. */
  private static List<SparkConnectServerProcess> on(String session, String view) {
    List<SparkConnectServerProcess> at = new ArrayList<>();
    for (SparkConnectServerProcess s : List.of(s1, s2)) {
      if (viewAt(s, "alice", session, view)) at.add(s);
    }
    return at;
  }

  /** Whether {@code server}'s session (user, session) has the temp view, asked without the proxy. */
  private static boolean viewAt(
      SparkConnectServerProcess server, String user, String session, String view) {
    ManagedChannel ch = Channels.plaintext(server.port()).build();
    try {
      new ConnectRequests(ch, user)
          .execute(ConnectRequests.sqlRequest(session, user, "SELECT * FROM " + view));
      return true;
    } catch (StatusRuntimeException e) {
      if (String.valueOf(e.getStatus().getDescription()).contains("TABLE_OR_VIEW_NOT_FOUND")) {
        return false;
      }
      throw e;
    } finally {
      ch.shutdownNow();
    }
  }

  private static MethodDescriptor<byte[], byte[]> method(String name) {
    return TestMethods.get(name);
  }

  private static String sha256(String token) throws Exception {
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
  }
}
