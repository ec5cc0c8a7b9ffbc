package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.sparkgate.Sparkgate;
import io.sparkgate.compat.PySparkEnv;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.MetricsScrape;
import io.sparkgate.testing.RedisServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Engines on demand, all real: two Sparkgate replicas sharing Redis start Spark Connect servers with
 * {@code spark-submit} from the pyspark 4.0.5 wheel's distribution, one per user, reached by the real JVM
 * client and PySpark; a Spark standalone master and worker from the same distribution run a pool's
 * executors. The tests share the fleet and run in order; at most two engines run at once (2 cores).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EnginesIT {
  private static final String SPARK = "4.0.5";
  private static final String ALICE = "en-alice-" + UUID.randomUUID();
  private static final String BOB = "en-bob-" + UUID.randomUUID();
  private static final String CAROL = "en-carol-" + UUID.randomUUID();
  private static final String CY = "en-cy-" + UUID.randomUUID(); // pool cluster, as proxy user
  private static final String BERT = "en-bert-" + UUID.randomUUID(); // pool broken
  private static final String DAVE = "en-dave-" + UUID.randomUUID(); // test 8's crashing replica
  private static final String ADMIN_TOKEN = "en-admin-" + UUID.randomUUID();
  private static final Duration IDLE = Duration.ofSeconds(45);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static Path dir;
  private static String[] lines; // every replica's configuration
  private static Path sparkHome;
  private static RedisServer redis;
  private static Sparkgate replica1;
  private static Sparkgate replica2;
  private static int masterPort;
  private static int masterUiPort;
  private static final List<Process> cluster = new ArrayList<>();
  private static final List<SparkSession> clients = new ArrayList<>();

  /** alice's engine port as test 1 read it back, and its process. */
  private static int alicePort;

  private static long alicePid;

  @BeforeAll
  static void start() throws Exception {
    PySparkEnv.requireVenv();
    sparkHome = PySparkEnv.sparkHome(SPARK);
    dir = ProxyConfigs.freshDir("engines");
    redis = RedisServer.start(dir.resolve("redis"));
    masterPort = freePort();
    masterUiPort = freePort();
    String home = "'" + sparkHome + "'";
    String small =
        "spark.driver.memory: 512m, spark.sql.shuffle.partitions: '2', spark.sql.warehouse.dir: '"
            + dir.resolve("warehouse")
            + "'";
    lines =
        new String[] {
          ProxyConfigs.PLAINTEXT_LISTENER,
          "auth:",
          "  static_tokens:",
          "    - {sha256: " + sha256(ALICE) + ", principal: alice, groups: [analysts]}",
          "    - {sha256: " + sha256(BOB) + ", principal: bob, groups: [analysts]}",
          "    - {sha256: " + sha256(CAROL) + ", principal: carol, groups: [analysts]}",
          "    - {sha256: " + sha256(CY) + ", principal: cy, groups: [cluster-users]}",
          "    - {sha256: " + sha256(BERT) + ", principal: bert, groups: [broken]}",
          "    - {sha256: " + sha256(DAVE) + ", principal: dave, groups: [analysts]}",
          "pools:",
          "  personal:",
          "    engines: {share: user, spark_home: "
              + home
              + ", master: 'local[1]', conf: {"
              + small
              + "}, max: 2, idle_timeout: "
              + IDLE.toSeconds()
              + "s, start_timeout: 3m,"
              + " log_dir: engines}",
          "    policy: '" + Path.of("policies", "shared-server.yaml").toAbsolutePath() + "'",
          "  cluster:",
          "    engines: {share: user, proxy_user: true, spark_home: "
              + home
              + ", master: 'spark://127.0.0.1:"
              + masterPort
              + "', conf: {"
              + small
              + ", spark.executor.memory: 512m,"
              + " spark.cores.max: '1'}, max: 1, log_dir: engines}",
          "    policy: '" + Path.of("policies", "shared-server.yaml").toAbsolutePath() + "'",
          "  broken:",
          "    engines: {share: user, spark_home: "
              + home
              + ", master: 'bogus://nowhere', max: 1,"
              + " log_dir: engines}",
          "    policy: '" + Path.of("policies", "shared-server.yaml").toAbsolutePath() + "'",
          "routes:",
          "  - match: {groups: [cluster-users]}",
          "    pool: cluster",
          "  - match: {groups: [broken]}",
          "    pool: broken",
          "  - match: {groups: [analysts]}",
          "    pool: personal",
          "sessions: {store: redis, redis_url: '" + redis.url() + "', idle_timeout: 1h}",
          "health: {interval: 1s, timeout: 1s}",
          "audit: {file: audit.jsonl, fsync: batch}",
          "admin: {address: 127.0.0.1, port: 0, token_file: admin.token}"
        };
    for (String replica : List.of("replica1", "replica2", "replica3")) {
      Files.createDirectories(dir.resolve(replica));
      Path token = dir.resolve(replica).resolve("admin.token");
      Files.writeString(token, ADMIN_TOKEN);
      Files.setPosixFilePermissions(
          token, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    }
    replica1 = Sparkgate.start(ProxyConfigs.write(dir.resolve("replica1"), lines));
    replica2 = Sparkgate.start(ProxyConfigs.write(dir.resolve("replica2"), lines));
  }

  @AfterAll
  static void stop() throws Exception {
    for (SparkSession c : clients) {
      try {
        c.close();
      } catch (Throwable ignored) {
        // its engine is gone: nothing to release
      }
    }
    List<Long> pids = enginePids();
    ProxyConfigs.closeAll(replica1, replica2);
    for (Process p : cluster) {
      p.destroy();
      if (!p.waitFor(20, TimeUnit.SECONDS)) p.destroyForcibly();
    }
    ProxyConfigs.closeAll(redis);
    // Stopping Sparkgate leaves no engine behind.
    for (long pid : pids) {
      assertFalse(
          ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
          "engine process " + pid + " outlived the replicas");
    }
  }

  // ---- 1: two principals, two engines; Spark refuses a dial without Sparkgate's token

  @Test
  @Order(1)
  void twoPrincipals_getTwoEngines_andNobodyDialsOneDirectly() throws Exception {
    SparkSession alice = client(replica1, ALICE);
    alicePort = Integer.parseInt(alice.conf().get("spark.connect.grpc.binding.port"));
    assertEquals(1L, alice.sql("SELECT 1").collectAsList().size());
    String bobPort = pyspark(replica1, BOB, "spark.conf.get('spark.connect.grpc.binding.port')");
    assertNotEquals(Integer.toString(alicePort), bobPort, "bob has an engine of his own");
    alicePid = pidOf("user:alice");

    // The engine listens where only this host reaches it, and Spark itself refuses a call without
    // the
    // token only Sparkgate knows.
    for (String token : new String[] {null, "guess"}) {
      StatusRuntimeException e = refusedConfig(alicePort, token, "alice", Duration.ofSeconds(10));
      assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode(), e.toString());
    }

    JsonNode engines = api(replica1, "/api/engines").get("engines");
    assertEquals(2, engines.size(), engines.toString());
    for (JsonNode e : engines) {
      assertEquals("ready", e.get("state").asText(), e.toString());
      assertFalse(e.get("owner").asText().isEmpty(), e.toString());
      assertTrue(e.get("address").asText().startsWith("127.0.0.1:"), e.toString());
    }
    Map<String, Double> metrics = metrics(replica1);
    assertEquals(
        2.0, metrics.get("sparkgate_engines{pool=personal,state=ready}"), metrics.toString());
    assertEquals(2.0, metrics.get("sparkgate_engine_start_seconds_count{pool=personal}"));
    List<String> audit = AuditLines.complete(dir.resolve("replica1/audit.jsonl"));
    assertTrue(
        audit.stream().filter(l -> l.contains("\"engine-ready\"")).count() >= 2, audit.toString());
    // Readiness does not depend on engines running: the broken and cluster pools have none.
    assertEquals(200, http(replica1, "GET", "/readyz").statusCode());
  }

  // ---- 2: one principal through two replicas: one engine

  @Test
  @Order(2)
  void onePrincipal_throughTwoReplicas_getsOneEngine() throws Exception {
    SparkSession viaTwo = client(replica2, ALICE);
    assertEquals(alicePort, Integer.parseInt(viaTwo.conf().get("spark.connect.grpc.binding.port")));
    JsonNode engines = api(replica2, "/api/engines").get("engines");
    long alices =
        Stream.of(JSON.treeToValue(engines, JsonNode[].class))
            .filter(e -> e.get("key").asText().equals("user:alice"))
            .count();
    assertEquals(1, alices, engines.toString());
    assertEquals(
        0.0,
        metrics(replica2).getOrDefault("sparkgate_engine_starts_total{pool=personal}", 0.0),
        "replica 2 started nothing");
  }

  // ---- 3: max reached: refused readably

  @Test
  @Order(3)
  void maxReached_refusesReadably() throws Exception {
    StatusRuntimeException e =
        refusedConfig(replica1.port(), CAROL, "carol", Duration.ofSeconds(30));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().contains("maximum of 2 Spark engines"),
        e.getStatus().getDescription());
    com.google.rpc.Status details = StatusProto.fromThrowable(e);
    assertTrue(
        details.getDetailsList().stream().anyMatch(a -> a.is(com.google.rpc.RetryInfo.class)),
        "RESOURCE_EXHAUSTED carries RetryInfo");
  }

  // ---- 4: a killed engine: its sessions are lost, the next session gets a new engine

  @Test
  @Order(4)
  void killedEngine_losesItsSessions_andIsReplaced() throws Exception {
    SparkSession bob = client(replica1, BOB);
    int before = Integer.parseInt(bob.conf().get("spark.connect.grpc.binding.port"));
    long pid = pidOf("user:bob");
    ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    Await.until(
        "bob's engine is gone from the directory",
        Duration.ofSeconds(30),
        () -> pidOrZero("user:bob") != pid);
    Exception lost = assertThrows(Exception.class, () -> bob.sql("SELECT 2").collectAsList());
    assertTrue(
        String.valueOf(lost.getMessage()).contains("SPARKGATE_SESSION_LOST"),
        String.valueOf(lost.getMessage()));
    SparkSession again = client(replica2, BOB);
    int after = Integer.parseInt(again.conf().get("spark.connect.grpc.binding.port"));
    assertNotEquals(before, after, "a new engine on a new port");
    List<String> audit = AuditLines.complete(dir.resolve("replica1/audit.jsonl"));
    assertTrue(
        audit.stream().anyMatch(l -> l.contains("\"engine-stop\"") && l.contains("exited")),
        audit.toString());
  }

  // ---- 5: an operator stops an engine; an idle engine stops by itself, and the next call starts
  // one

  @Test
  @Order(5)
  void operatorStop_andIdleStop_andTheNextCallStartsAnother() throws Exception {
    // bob's engine was started through replica 2 in test 4: replica 1 cannot stop it, and says so.
    long bobPid = pidOf("user:bob");
    HttpResponse<String> notOwner = http(replica1, "POST", "/api/engines/personal/user%3Abob/stop");
    assertEquals(404, notOwner.statusCode(), notOwner.body());
    assertTrue(notOwner.body().contains("owned by this replica"), notOwner.body());
    // The operator stops it from the owner's console, in a real browser.
    WebDriver browser = Browsers.chromium("EnginesIT stops an engine from the console in");
    try {
      WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(60));
      browser.get("http://127.0.0.1:" + replica2.adminPort() + "/");
      wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token")))
          .sendKeys(ADMIN_TOKEN);
      browser.findElement(By.id("token-save")).click();
      WebElement row =
          wait.until(
              ExpectedConditions.visibilityOfElementLocated(
                  By.cssSelector("#engines tr[data-key^='personal|user:bob|']")));
      assertTrue(row.getText().contains("ready"), row.getText());
      row.findElement(By.cssSelector("button.stop-engine")).click();
      wait.until(
          ExpectedConditions.textToBePresentInElementLocated(
              By.id("action"), "stop engine user:bob: stopping"));
    } finally {
      browser.quit();
    }
    Await.until(
        "bob's engine has stopped",
        Duration.ofSeconds(40),
        () -> !ProcessHandle.of(bobPid).map(ProcessHandle::isAlive).orElse(false));

    // alice's engine: idle since test 2, stopped after idle_timeout.
    Await.until(
        "alice's idle engine has stopped",
        IDLE.plusSeconds(60),
        () -> !ProcessHandle.of(alicePid).map(ProcessHandle::isAlive).orElse(false));
    List<String> audit = new ArrayList<>(AuditLines.complete(dir.resolve("replica1/audit.jsonl")));
    audit.addAll(AuditLines.complete(dir.resolve("replica2/audit.jsonl")));
    assertTrue(
        audit.stream().anyMatch(l -> l.contains("\"engine-stop\"") && l.contains("idle for")),
        audit.toString());
    assertTrue(
        audit.stream()
            .anyMatch(l -> l.contains("\"engine-stop\"") && l.contains("stopped by operator")),
        audit.toString());

    SparkSession alice = client(replica2, ALICE);
    int port = Integer.parseInt(alice.conf().get("spark.connect.grpc.binding.port"));
    assertNotEquals(alicePort, port, "a new engine");
  }

  // ---- 6: a failing launch: one readable sentence to the client, the log tail to the operator

  @Test
  @Order(6)
  void failingLaunch_isReportedReadably() throws Exception {
    StatusRuntimeException e = refusedConfig(replica1.port(), BERT, "bert", Duration.ofMinutes(3));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().contains("Your Spark engine could not be started"),
        e.getStatus().getDescription());
    List<String> audit = AuditLines.complete(dir.resolve("replica1/audit.jsonl"));
    assertTrue(
        audit.stream().anyMatch(l -> l.contains("\"engine-failed\"") && l.contains("Master must")),
        "the operator gets the engine's log tail: " + audit);
    assertTrue(metrics(replica1).get("sparkgate_engine_start_failures_total{pool=broken}") >= 1.0);
  }

  // ---- 7: executors on a Spark standalone cluster's worker

  @Test
  @Order(7)
  void executorsRunOnTheStandaloneClustersWorker_asTheProxyUser() throws Exception {
    // Room for the cluster: only alice's engine runs now.
    Path work = dir.resolve("worker");
    Files.createDirectories(work);
    cluster.add(
        sparkClass(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            Integer.toString(masterPort),
            "--webui-port",
            Integer.toString(masterUiPort)));
    Await.until("the master answers", Duration.ofSeconds(60), () -> masterJson() != null);
    cluster.add(
        sparkClass(
            "worker",
            "org.apache.spark.deploy.worker.Worker",
            "--host",
            "127.0.0.1",
            "--cores",
            "1",
            "--memory",
            "1g",
            "--webui-port",
            Integer.toString(freePort()),
            "--work-dir",
            work.toString(),
            "spark://127.0.0.1:" + masterPort));
    Await.until(
        "the worker registered",
        Duration.ofSeconds(60),
        () -> masterJson() != null && masterJson().get("workers").size() == 1);

    String count = pyspark(replica1, CY, "spark.range(1000).repartition(2).count()");
    assertEquals("1000", count);
    JsonNode master = masterJson();
    JsonNode app = master.get("activeapps").get(0);
    assertEquals("sparkgate-cluster-user:cy", app.get("name").asText(), master.toString());
    assertTrue(app.get("cores").asInt() >= 1, app.toString());
    // The executor ran tasks on the worker, as the principal: spark-submit --proxy-user cy makes cy
    // the
    // application's Spark user, which the executor's security manager names beside the OS user.
    try (Stream<Path> files = Files.walk(work)) {
      List<String> executorLogs =
          files
              .filter(p -> p.getFileName().toString().equals("stderr"))
              .map(EnginesIT::readable)
              .toList();
      assertTrue(
          executorLogs.stream()
              .anyMatch(
                  log ->
                      log.contains("Running task")
                          && log.contains(
                              "Changing view acls to: " + System.getProperty("user.name") + ",cy")),
          "an executor ran tasks in the worker's work directory as Spark user cy: " + executorLogs);
    }
    // Room for test 8: the cluster's engine, worker and master go.
    HttpResponse<String> stopped = http(replica1, "POST", "/api/engines/cluster/user%3Acy/stop");
    assertEquals(202, stopped.statusCode(), stopped.body());
    for (Process p : cluster) {
      p.destroy();
      p.waitFor(20, TimeUnit.SECONDS);
    }
  }

  // ---- 8: a replica that crashes finds its engine again; when it stays gone, another adopts it

  @Test
  @Order(8)
  void crashedReplica_findsItsEngineAgain_andAnotherAdoptsItWhenItStaysGone() throws Exception {
    int port = freePort();
    Process first = processReplica(port);
    String enginePort;
    long pid;
    try {
      enginePort = pyspark(port, DAVE, "spark.conf.get('spark.connect.grpc.binding.port')");
      pid = pidOf("user:dave");
    } finally {
      first.destroyForcibly().waitFor(30, TimeUnit.SECONDS); // a crash: no shutdown hook runs
    }
    assertTrue(
        ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
        "the engine survives its replica's crash");

    Process again = processReplica(port);
    try {
      assertEquals(
          enginePort,
          pyspark(port, DAVE, "spark.conf.get('spark.connect.grpc.binding.port')"),
          "the same engine, found again");
      assertEquals(pid, pidOf("user:dave"));
      List<String> audit = AuditLines.complete(dir.resolve("replica3/audit.jsonl"));
      assertTrue(
          audit.stream().anyMatch(l -> l.contains("\"engine-adopt\"") && l.contains("found again")),
          audit.toString());
      assertEquals(
          1,
          audit.stream().filter(l -> l.contains("\"engine-start\"")).count(),
          "no second engine for dave");
    } finally {
      again.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
    // Gone for good: once its heartbeat has expired, one of the other replicas adopts the engine.
    Await.until(
        "another replica adopted dave's engine",
        Duration.ofSeconds(60),
        () -> {
          List<String> audit =
              new ArrayList<>(AuditLines.complete(dir.resolve("replica1/audit.jsonl")));
          audit.addAll(AuditLines.complete(dir.resolve("replica2/audit.jsonl")));
          return audit.stream()
              .anyMatch(
                  l ->
                      l.contains("\"engine-adopt\"")
                          && l.contains("user:dave")
                          && l.contains("is gone"));
        });
    assertEquals(
        enginePort, pyspark(replica1, DAVE, "spark.conf.get('spark.connect.grpc.binding.port')"));
    assertEquals(pid, pidOf("user:dave"), "adopted, not restarted");
  }

  /** A replica as operators run it ({@code java -jar target/sparkgate.jar serve}), on a fixed port. */
  private static Process processReplica(int port) throws Exception {
    Path home = dir.resolve("replica3");
    List<String> config = new ArrayList<>();
    for (String line : lines) {
      config.add(
          line.equals(ProxyConfigs.PLAINTEXT_LISTENER)
              ? "listen: {address: 127.0.0.1, port: " + port + ", plaintext: true}"
              : line);
    }
    Files.writeString(home.resolve("sparkgate.yaml"), String.join("\n", config) + "\n");
    Process p = ShippedJar.serve(home.resolve("sparkgate.yaml"), home, home.resolve("proxy.log"));
    Await.until(
        "the process replica listens",
        Duration.ofSeconds(60),
        () -> {
          try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            return true;
          } catch (IOException e) {
            assertTrue(p.isAlive(), "the process replica exited: see " + home.resolve("proxy.log"));
            return false;
          }
        });
    return p;
  }

  // ---- helpers

  /** The process of {@code key}'s engine, by its port (the directory's record). */
  private static long pidOf(String key) throws Exception {
    long pid = pidOrZero(key);
    assertTrue(pid > 0, "no engine " + key);
    return pid;
  }

  private static long pidOrZero(String key) throws Exception {
    String raw = redisRecord(key);
    if (raw == null) return 0;
    return JSON.readTree(raw).get("pid").asLong();
  }

  private static String redisRecord(String key) {
    return redisClient().hget("sparkgate:engines:personal", key);
  }

  private static List<Long> enginePids() throws Exception {
    List<Long> out = new ArrayList<>();
    for (String pool : List.of("personal", "cluster", "broken")) {
      for (String v : redisClient().hvals("sparkgate:engines:" + pool)) {
        out.add(JSON.readTree(v).get("pid").asLong());
      }
    }
    return out;
  }

  private static io.lettuce.core.api.sync.RedisCommands<String, String> redisCommands;

  private static synchronized io.lettuce.core.api.sync.RedisCommands<String, String> redisClient() {
    if (redisCommands == null) {
      redisCommands = io.lettuce.core.RedisClient.create(redis.url()).connect().sync();
    }
    return redisCommands;
  }

  private static Process sparkClass(String name, String mainClass, String... args)
      throws IOException {
    List<String> cmd =
        new ArrayList<>(List.of(sparkHome.resolve("bin/spark-class").toString(), mainClass));
    cmd.addAll(List.of(args));
    ProcessBuilder b = new ProcessBuilder(cmd);
    PySparkEnv.clearInherited(b.environment());
    b.environment().put("SPARK_HOME", sparkHome.toString());
    b.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    b.redirectErrorStream(true);
    b.redirectOutput(dir.resolve(name + ".log").toFile());
    return b.start();
  }

  private static JsonNode masterJson() {
    try {
      HttpResponse<String> r =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + masterUiPort + "/json/"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  private static String readable(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      return "";
    }
  }

  /** A Config call to {@code port} with {@code token} (null: none) as {@code user}, which must fail. */
  private static StatusRuntimeException refusedConfig(
      int port, String token, String user, Duration deadline) {
    var builder = Channels.plaintext(port);
    ManagedChannel ch =
        (token == null ? builder : builder.intercept(Channels.bearer(token))).build();
    try {
      return assertThrows(
          StatusRuntimeException.class,
          () ->
              ClientCalls.blockingUnaryCall(
                  ch,
                  TestMethods.get("Config"),
                  io.grpc.CallOptions.DEFAULT.withDeadlineAfter(
                      deadline.toMillis(), TimeUnit.MILLISECONDS),
                  configGet(user).toByteArray()));
    } finally {
      ch.shutdownNow();
    }
  }

  private static ConfigRequest configGet(String user) {
    return ConfigRequest.newBuilder()
        .setSessionId(UUID.randomUUID().toString())
        .setUserContext(UserContext.newBuilder().setUserId(user))
        .setOperation(
            ConfigRequest.Operation.newBuilder()
                .setGet(ConfigRequest.Get.newBuilder().addKeys("spark.sql.shuffle.partitions")))
        .build();
  }

  private static SparkSession client(Sparkgate replica, String token) {
    SparkSession s = SparkClients.connect("sc://localhost:" + replica.port() + "/;token=" + token);
    clients.add(s);
    return s;
  }

  /** Runs one PySpark expression through {@code replica} as the token's principal; its printed value. */
  private static String pyspark(Sparkgate replica, String token, String expression)
      throws Exception {
    return pyspark(replica.port(), token, expression);
  }

  private static String pyspark(int port, String token, String expression) throws Exception {
    String program =
        String.join(
            "\n",
            "import os, sys",
            "from pyspark.sql import SparkSession",
            "spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()",
            "print('RESULT=' + str(" + expression + "))",
            "spark.stop()",
            "");
    Path file = dir.resolve("program-" + UUID.randomUUID() + ".py");
    Files.writeString(file, program);
    ProcessBuilder b =
        new ProcessBuilder(
            PySparkEnv.python(SPARK).toString(),
            file.toString(),
            "sc://localhost:" + port + "/;token=" + token);
    PySparkEnv.clearInherited(b.environment());
    b.redirectErrorStream(true);
    Process p = b.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(5, TimeUnit.MINUTES), "the PySpark program did not finish");
    assertEquals(0, p.exitValue(), out);
    return out.lines()
        .filter(l -> l.startsWith("RESULT="))
        .findFirst()
        .orElseThrow(() -> new AssertionError(out))
        .substring("RESULT=".length());
  }

  private static Map<String, Double> metrics(Sparkgate replica) throws Exception {
    HttpResponse<String> r = http(replica, "GET", "/metrics");
    assertEquals(200, r.statusCode(), r.body());
    return MetricsScrape.parse(r.body());
  }

  private static JsonNode api(Sparkgate replica, String path) throws Exception {
    HttpResponse<String> r = http(replica, "GET", path);
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  private static HttpResponse<String> http(Sparkgate replica, String method, String path)
      throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + replica.adminPort() + path))
            .header("Authorization", "Bearer " + ADMIN_TOKEN)
            .header("Content-Type", "application/json")
            .method(
                method,
                method.equals("POST")
                    ? HttpRequest.BodyPublishers.ofString("{}")
                    : HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static String sha256(String token) throws Exception {
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
  }
}
