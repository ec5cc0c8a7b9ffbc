package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.sparkgate.Sparkgate;
import io.sparkgate.compat.PySparkEnv;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.tls.DevCertificates;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;

/**
 * Data access grants (the policy's {@code data_access:} section) end to end, on the shared Spark 4.0 server
 * with the real JVM client and real PySpark, and on the shared Spark 3.5.7 Hudi + Iceberg server with requests
 * built from the protos. One proxy per server runs a policy written here: the shipped shared-server rules
 * (included), data denied by default, team grants as in policies/team-data.yaml and an admin grant on
 * everything. An admin creates the teams' namespaces and tables through the proxy; alice (finance) and bob
 * (marketing) each read and write their own team's table, their own scratch namespace and read the shared
 * one, and are refused the other team's table in every form a client sends it: SQL, USE then an unqualified
 * name, DataFrame reads and writes, the Catalog API, views, temporary views and AnalyzePlan. The audit log
 * has each refusal under rule {@code data-access}.
 */
@ExtendWith({SparkServerExtension.class, MixedLakehouseServerExtension.class})
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DataAccessIT {
  private static final String PYSPARK_VERSION = "4.0.5";
  private static final Path PROGRAM = Path.of("src", "test", "python", "grants", "data_access.py");
  private static final ObjectMapper JSON = new ObjectMapper();

  /** principal -> its token; groups in {@link #USERS}. */
  private static final Map<String, String> TOKENS = new LinkedHashMap<>();

  private static final Map<String, String> USERS =
      Map.of("admin", "sparkgate-admins", "alice", "finance", "bob", "marketing");

  private static DevCertificates.Generated certs;
  private static Path auditFile;
  private static Sparkgate proxy;
  private static Sparkgate mixedProxy;
  private static ManagedChannel mixedChannel;
  private static SparkSession admin;
  private static SparkSession alice;
  private static SparkSession bob;

  /** Refusals the clients met, per principal, that the audit log must hold. */
  private static final Map<String, Integer> refusals = new LinkedHashMap<>();

  @BeforeAll
  static void start(
      SparkConnectServerProcess server, MixedLakehouseServerExtension.MixedServer mixed)
      throws Exception {
    Path dir = ProxyConfigs.freshDir("data-access");
    certs = DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    auditFile = dir.resolve("audit.jsonl");
    Path policy = Files.writeString(dir.resolve("policy.yaml"), policy());
    List<String> auth = new ArrayList<>(List.of("auth:", "  static_tokens:"));
    for (String user : List.of("admin", "alice", "bob")) {
      String token = "data-access-it-" + user + "-" + UUID.randomUUID();
      TOKENS.put(user, token);
      auth.add(
          "    - {sha256: "
              + sha256(token)
              + ", principal: "
              + user
              + ", groups: ["
              + USERS.get(user)
              + "]}");
    }
    List<String> config =
        new ArrayList<>(
            List.of(
                "listen: {address: 127.0.0.1, port: 0}",
                "tls: {cert_file: certs/server.pem, key_file: certs/server.key}",
                "backend: {address: 'localhost:" + server.port() + "'}",
                "policy: {file: '" + policy + "'}",
                "audit: {file: audit.jsonl, fsync: batch}"));
    config.addAll(auth);
    proxy = Sparkgate.start(ProxyConfigs.write(dir, config.toArray(String[]::new)));
    ClientTrust.useTrustStore(certs.trustStore());

    Path mixedDir = Files.createDirectories(dir.resolve("mixed"));
    List<String> mixedConfig =
        new ArrayList<>(
            List.of(
                ProxyConfigs.PLAINTEXT_LISTENER,
                ProxyConfigs.backend(mixed.process().port()),
                "policy: {file: '" + policy + "'}"));
    mixedConfig.addAll(auth);
    mixedProxy = Sparkgate.start(ProxyConfigs.write(mixedDir, mixedConfig.toArray(String[]::new)));
    mixedChannel = Channels.plaintext(mixedProxy.port()).build();

    // The admin sets the scene through the proxy: its grant covers every table and namespace.
    admin = connect("admin");
    for (String ns : List.of("finance", "marketing", "shared", "scratch_alice", "scratch_bob")) {
      admin.sql("CREATE NAMESPACE IF NOT EXISTS " + ns);
    }
    for (String table : List.of("finance.payroll", "marketing.leads", "shared.calendar")) {
      admin.sql("DROP TABLE IF EXISTS " + table);
      admin.sql("CREATE TABLE " + table + " (id BIGINT, amount BIGINT) USING parquet");
      admin.sql("INSERT INTO " + table + " VALUES (1, 10), (2, 20)");
    }
    alice = connect("alice");
    bob = connect("bob");
  }

  @AfterAll
  static void stop() throws Exception {
    if (mixedChannel != null) mixedChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    ProxyConfigs.closeAll(alice, bob, admin, proxy, mixedProxy);
  }

  /** The test's policy: the shipped rules, data denied unless granted, team-data.yaml's grants, admins. */
  private static String policy() {
    Path shared = Path.of("policies", "shared-server.yaml").toAbsolutePath();
    return String.join(
        "\n",
        "default: allow",
        "rules:",
        "  - include: " + shared,
        "data_access:",
        "  default: deny",
        "  grants:",
        "    - name: admins",
        "      to: {groups: [sparkgate-admins]}",
        "      tables: ['*.*.*']",
        "      privileges: [all]",
        "    - name: finance-team",
        "      to: {groups: [finance]}",
        "      tables: ['spark_catalog.finance.*', 'iceberg.finance.*']",
        "      privileges: [select, modify, create, alter, drop, maintain]",
        "    - name: marketing-team",
        "      to: {groups: [marketing]}",
        "      tables: ['spark_catalog.marketing.*', 'iceberg.marketing.*']",
        "      privileges: [select, modify, create, alter, drop, maintain]",
        "    - name: analysts-read-shared",
        "      to: {groups: [analysts, finance, marketing]}",
        "      tables: ['spark_catalog.shared.*']",
        "      privileges: [select]",
        "    - name: own-scratch",
        "      to: {principals: ['*']}",
        "      tables: ['spark_catalog.scratch_{principal}.*']",
        "      privileges: [all]",
        "    - name: finance-bucket",
        "      to: {groups: [finance]}",
        "      paths: ['s3a://finance-data/*']",
        "      privileges: [select, modify]",
        "    - name: marketing-bucket",
        "      to: {groups: [marketing]}",
        "      paths: ['s3a://marketing-data/*']",
        "      privileges: [select, modify]",
        "");
  }

  private static SparkSession connect(String user) {
    return SparkClients.connect(
        "sc://localhost:" + proxy.port() + "/;use_ssl=true;token=" + TOKENS.get(user));
  }

  /** One thing a client does: what it expects, and for a refusal what the message must name. */
  private record Form(String name, boolean allowed, String needle, Callable<Object> run) {}

  private static List<Form> jvmForms(SparkSession spark, String name, String own, String other) {
    String ownNs = own.split("\\.")[0];
    String otherNs = other.split("\\.")[0];
    String otherTable = other.split("\\.")[1];
    String ownTable = own.split("\\.")[1];
    return List.of(
        new Form("read own table", true, null, () -> spark.table(own).count()),
        new Form(
            "USE own namespace then an unqualified name",
            true,
            null,
            () -> {
              spark.sql("USE " + ownNs);
              try {
                return spark.sql("SELECT count(*) FROM " + ownTable).first().getLong(0);
              } finally {
                spark.sql("USE default");
              }
            }),
        new Form(
            "insertInto own table",
            true,
            null,
            () -> {
              spark
                  .sql("SELECT CAST(100 AS BIGINT) AS id, CAST(1 AS BIGINT) AS amount")
                  .write()
                  .insertInto(own);
              return null;
            }),
        new Form(
            "SQL INSERT into own table",
            true,
            null,
            () -> spark.sql("INSERT INTO " + own + " VALUES (101, 2)").collectAsList()),
        new Form(
            "saveAsTable into own scratch",
            true,
            null,
            () -> {
              spark.range(3).write().mode("overwrite").saveAsTable("scratch_" + name + ".jvm_work");
              return spark.table("scratch_" + name + ".jvm_work").count();
            }),
        new Form(
            "read shared",
            true,
            null,
            () -> spark.sql("SELECT count(*) FROM shared.calendar").first().getLong(0)),
        new Form(
            "temp view over own table",
            true,
            null,
            () -> {
              spark.table(own).createOrReplaceTempView("jvm_mine");
              return spark.sql("SELECT count(*) FROM jvm_mine").first().getLong(0);
            }),
        new Form("schema of own table (AnalyzePlan)", true, null, () -> spark.table(own).schema()),
        new Form("catalog.getTable of own table", true, null, () -> spark.catalog().getTable(own)),
        new Form(
            "SQL SELECT", false, other, () -> spark.sql("SELECT * FROM " + other).collectAsList()),
        new Form(
            "USE then an unqualified name",
            false,
            other,
            () -> {
              spark.sql("USE " + otherNs);
              try {
                return spark.sql("SELECT * FROM " + otherTable).collectAsList();
              } finally {
                spark.sql("USE default");
              }
            }),
        new Form("spark.table", false, other, () -> spark.table(other).collectAsList()),
        new Form("spark.read.table", false, other, () -> spark.read().table(other).collectAsList()),
        new Form("schema (AnalyzePlan)", false, other, () -> spark.table(other).schema()),
        new Form(
            "columns (AnalyzePlan)", false, other, () -> List.of(spark.table(other).columns())),
        new Form(
            "insertInto",
            false,
            other,
            () -> {
              spark
                  .sql("SELECT CAST(7 AS BIGINT) AS id, CAST(7 AS BIGINT) AS amount")
                  .write()
                  .insertInto(other);
              return null;
            }),
        new Form(
            "saveAsTable",
            false,
            otherNs + ".jvm_stolen",
            () -> {
              spark.range(1).write().saveAsTable(otherNs + ".jvm_stolen");
              return null;
            }),
        new Form(
            "catalog.listTables",
            false,
            otherNs,
            () -> spark.catalog().listTables(otherNs).collectAsList()),
        new Form("catalog.getTable", false, other, () -> spark.catalog().getTable(other)),
        new Form("catalog.tableExists", false, other, () -> spark.catalog().tableExists(other)),
        new Form(
            "catalog.listColumns",
            false,
            other,
            () -> spark.catalog().listColumns(other).collectAsList()),
        new Form(
            "CREATE VIEW over it",
            false,
            other,
            () ->
                spark
                    .sql("CREATE VIEW " + ownNs + ".jvm_leak AS SELECT * FROM " + other)
                    .collectAsList()),
        new Form(
            "CREATE TEMP VIEW over it",
            false,
            other,
            () -> spark.sql("CREATE TEMP VIEW jvm_leak AS SELECT * FROM " + other).collectAsList()),
        new Form(
            "createOrReplaceTempView over it",
            false,
            other,
            () -> {
              spark.table(other).createOrReplaceTempView("jvm_leak2");
              return null;
            }),
        new Form(
            "the other team's files with a reader",
            false,
            "s3a://" + otherNs + "-data/2026",
            () -> spark.read().parquet("s3a://" + otherNs + "-data/2026/").collectAsList()),
        new Form(
            "a table of one's own located in the other team's files",
            false,
            "s3a://" + otherNs + "-data/t",
            () ->
                spark
                    .sql(
                        "CREATE TABLE "
                            + ownNs
                            + ".jvm_located (id BIGINT) USING parquet LOCATION 's3a://"
                            + otherNs
                            + "-data/t'")
                    .collectAsList()));
  }

  @Test
  @Order(1)
  void jvmClient_eachTeamWorksOnItsOwnData_andIsRefusedTheOthersInEveryForm() {
    List<Executable> checks = new ArrayList<>();
    for (Object[] user :
        List.of(
            new Object[] {alice, "alice", "finance.payroll", "marketing.leads"},
            new Object[] {bob, "bob", "marketing.leads", "finance.payroll"})) {
      String name = (String) user[1];
      for (Form form : jvmForms((SparkSession) user[0], name, (String) user[2], (String) user[3])) {
        String label = "JVM client, " + name + ": " + form.name();
        Object value = null;
        Throwable error = null;
        try {
          value = form.run().call();
        } catch (Throwable t) {
          error = t;
        }
        checks.add(outcome(label, name, form.allowed(), form.needle(), value, error));
      }
    }
    assertAll(checks);
  }

  @Test
  @Order(2)
  void pyspark_eachTeamWorksOnItsOwnData_andIsRefusedTheOthersInEveryForm() throws Exception {
    PySparkEnv.requireVenv();
    ProcessBuilder builder =
        new ProcessBuilder(
                PySparkEnv.python(PYSPARK_VERSION).toString(),
                PROGRAM.toAbsolutePath().toString(),
                "--target",
                "localhost:" + proxy.port(),
                "--ca",
                certs.caCert().toAbsolutePath().toString(),
                "--user",
                "alice:finance.payroll:marketing.leads",
                "--user",
                "bob:marketing.leads:finance.payroll")
            .redirectError(ProcessBuilder.Redirect.INHERIT);
    PySparkEnv.clearInherited(builder.environment());
    builder.environment().put("SPARKGATE_TOKEN_ALICE", TOKENS.get("alice"));
    builder.environment().put("SPARKGATE_TOKEN_BOB", TOKENS.get("bob"));
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(5, TimeUnit.MINUTES), "the PySpark program did not finish");
    assertEquals(0, p.exitValue(), out);
    List<Executable> checks = new ArrayList<>();
    int lines = 0;
    for (String line : out.strip().lines().toList()) {
      if (!line.startsWith("{")) continue;
      lines++;
      JsonNode n = JSON.readTree(line);
      String name = n.get("user").asText();
      boolean ok = n.get("ok").asBoolean();
      checks.add(
          outcome(
              "PySpark " + PYSPARK_VERSION + ", " + name + ": " + n.get("form").asText(),
              name,
              "allow".equals(n.get("expect").asText()),
              n.get("needle").isNull() ? null : n.get("needle").asText(),
              ok ? n.path("value").asText() : null,
              ok ? null : new AssertionError(n.path("error").asText())));
    }
    assertEquals(46, lines, "forms run: " + out);
    assertAll(checks);
  }

  /** Checks one form's outcome: an allowed form returned; a refused one names data-access and the table. */
  private static Executable outcome(
      String label, String user, boolean allowed, String needle, Object value, Throwable error) {
    if (!allowed && error != null && String.valueOf(error.getMessage()).contains("'data-access'")) {
      synchronized (refusals) {
        refusals.merge(user, 1, Integer::sum);
      }
    }
    return () -> {
      if (allowed) {
        if (error != null) {
          fail(label + ": a legitimate form was refused: " + error, error);
        }
        System.out.println("allowed  " + label + " -> " + value);
        return;
      }
      if (error == null) {
        fail(label + ": NOT refused (bypass), it returned " + value);
      }
      String message = String.valueOf(error.getMessage());
      assertTrue(message.contains("SPARKGATE_POLICY_DENIED"), label + ": " + message);
      assertTrue(message.contains("'data-access'"), label + ": " + message);
      assertTrue(message.contains(needle), label + ": should name " + needle + ": " + message);
      System.out.println("refused  " + label + " -> " + message.lines().findFirst().orElse(""));
    };
  }

  @Test
  @Order(3)
  void auditLog_recordsEachRefusalUnderDataAccess() throws Exception {
    assertFalse(refusals.isEmpty(), "run after the client tests");
    for (Map.Entry<String, Integer> e : refusals.entrySet()) {
      String user = e.getKey();
      List<JsonNode> denied =
          Await.value(
              e.getValue() + " data-access refusals of " + user + " in the audit log",
              () -> deniedRecords(user),
              records -> records.size() >= e.getValue());
      assertTrue(
          denied.stream().anyMatch(r -> "AnalyzePlan".equals(r.path("rpc").asText())),
          user + ": no AnalyzePlan refusal recorded");
      assertTrue(
          denied.stream().anyMatch(r -> "ExecutePlan".equals(r.path("rpc").asText())),
          user + ": no ExecutePlan refusal recorded");
      assertTrue(
          denied.stream().allMatch(r -> "PERMISSION_DENIED".equals(r.path("status").asText())),
          denied.toString());
    }
    // The admin's setup and the legitimate forms were never refused for data.
    for (String line : AuditLines.complete(auditFile)) {
      JsonNode r = JSON.readTree(line);
      if ("admin".equals(r.path("principal").asText())) {
        assertEquals("allow", r.path("decision").asText(), r.toString());
      }
    }
  }

  private static List<JsonNode> deniedRecords(String user) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (String line : AuditLines.complete(auditFile)) {
      JsonNode r = JSON.readTree(line);
      if (user.equals(r.path("principal").asText())
          && "deny".equals(r.path("decision").asText())
          && "data-access".equals(r.path("rule").asText())) {
        out.add(r);
      }
    }
    return out;
  }

  @Test
  @Order(4)
  void icebergOnTheMixedServer_grantReadsTableAndMetadata_othersAreRefusedBoth() {
    ConnectRequests adminRequests = requests("admin");
    ConnectRequests aliceRequests = requests("alice");
    ConnectRequests bobRequests = requests("bob");
    adminRequests.sql("CREATE NAMESPACE IF NOT EXISTS iceberg.finance");
    adminRequests.sql("DROP TABLE IF EXISTS iceberg.finance.t");
    adminRequests.sql("CREATE TABLE iceberg.finance.t (id BIGINT) USING iceberg");
    adminRequests.sql("INSERT INTO iceberg.finance.t VALUES (1), (2)");

    String table = "SELECT count(*) FROM iceberg.finance.t";
    String snapshots = "SELECT count(*) FROM iceberg.finance.t.snapshots";
    assertEquals(List.of(List.of(2L)), aliceRequests.sql(table));
    assertEquals(List.of(List.of(1L)), aliceRequests.sql(snapshots));
    List<Executable> checks = new ArrayList<>();
    for (String sql : List.of(table, snapshots)) {
      checks.add(
          () -> {
            StatusRuntimeException e = null;
            try {
              bobRequests.sql(sql);
            } catch (StatusRuntimeException refused) {
              e = refused;
            }
            if (e == null) fail("bob: NOT refused (bypass): " + sql);
            assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode(), sql);
            String message = String.valueOf(e.getStatus().getDescription());
            assertTrue(
                message.contains("'data-access'") && message.contains("iceberg.finance.t"),
                sql + ": " + message);
            System.out.println("refused  3.5.7, bob: " + sql + " -> " + message);
          });
    }
    assertAll(checks);
  }

  private static ConnectRequests requests(String user) {
    return new ConnectRequests(
        ClientInterceptors.intercept(mixedChannel, Channels.bearer(TOKENS.get(user))), user);
  }

  private static String sha256(String token) throws Exception {
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
  }
}
