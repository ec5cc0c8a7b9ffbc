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
 *
 * <p>Iceberg, with the JVM client on the 4.0 server: each team creates a table in its Iceberg namespace,
 * writes it, reads its metadata tables, time-travels to its first snapshot and writes and reads a branch; the
 * other team is refused each of those forms on it, and nothing they tried changed it. On the 3.5.7 server,
 * with real PySpark 3.5: each team creates and works on its own Iceberg and Hudi tables and is refused the
 * other team's in SQL, {@code spark.table}, the reader, writes, AnalyzePlan and the Catalog API.
 */
@ExtendWith({SparkServerExtension.class, MixedLakehouseServerExtension.class})
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DataAccessIT {
  private static final String PYSPARK_VERSION = "4.0.5";
  private static final String PYSPARK_35 = "3.5.9";
  private static final Path PROGRAM = Path.of("src", "test", "python", "grants", "data_access.py");
  private static final Path LAKEHOUSE_PROGRAM =
      Path.of("src", "test", "python", "grants", "lakehouse_access.py");
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
    // TLS like the 4.0 proxy's: PySpark sends a token only over TLS.
    List<String> mixedConfig =
        new ArrayList<>(
            List.of(
                "listen: {address: 127.0.0.1, port: 0}",
                "tls: {cert_file: '"
                    + certs.serverCert()
                    + "', key_file: '"
                    + certs.serverKey()
                    + "'}",
                ProxyConfigs.backend(mixed.process().port()),
                "policy: {file: '" + policy + "'}"));
    mixedConfig.addAll(auth);
    mixedProxy = Sparkgate.start(ProxyConfigs.write(mixedDir, mixedConfig.toArray(String[]::new)));
    mixedChannel = Channels.tls(mixedProxy.port(), certs.caCert()).build();

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
    String out =
        runPySpark(
            PYSPARK_VERSION,
            PROGRAM,
            proxy,
            "--user",
            "alice:finance.payroll:marketing.leads",
            "--user",
            "bob:marketing.leads:finance.payroll");
    assertPySparkForms(PYSPARK_VERSION, out, 46);
  }

  /** Runs a PySpark program against a proxy with alice's and bob's tokens; returns its output. */
  private static String runPySpark(String version, Path program, Sparkgate target, String... args)
      throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                PySparkEnv.python(version).toString(),
                program.toAbsolutePath().toString(),
                "--target",
                "localhost:" + target.port(),
                "--ca",
                certs.caCert().toAbsolutePath().toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
    PySparkEnv.clearInherited(builder.environment());
    builder.environment().put("SPARKGATE_TOKEN_ALICE", TOKENS.get("alice"));
    builder.environment().put("SPARKGATE_TOKEN_BOB", TOKENS.get("bob"));
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(5, TimeUnit.MINUTES), "the PySpark program did not finish");
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  /**
   * Checks each JSON line a PySpark program printed: an allowed form returned (its {@code want}, when
   * given), a refused one names data-access and its needle; and that {@code forms} forms ran.
   */
  private static void assertPySparkForms(String version, String out, int forms) throws Exception {
    List<Executable> checks = new ArrayList<>();
    int lines = 0;
    for (String line : out.strip().lines().toList()) {
      if (!line.startsWith("{")) continue;
      lines++;
      JsonNode n = JSON.readTree(line);
      String name = n.get("user").asText();
      boolean ok = n.get("ok").asBoolean();
      String label = "PySpark " + version + ", " + name + ": " + n.get("form").asText();
      String want = n.path("want").isTextual() ? n.get("want").asText() : null;
      Throwable error = ok ? null : new AssertionError(n.path("error").asText());
      if (ok && want != null && !want.equals(n.path("value").asText())) {
        error = new AssertionError("returned " + n.path("value").asText() + ", expected " + want);
      }
      checks.add(
          outcome(
              label,
              name,
              "allow".equals(n.get("expect").asText()),
              n.get("needle").isNull() ? null : n.get("needle").asText(),
              ok ? n.path("value").asText() : null,
              error));
    }
    assertEquals(forms, lines, "forms run: " + out);
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
          fail(label + ": a legitimate form failed: " + error, error);
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

  /** The first snapshot of a team's Iceberg table and when it was committed, for time travel. */
  private record FirstSnapshot(long id, String committedAt) {}

  /**
   * A team's work on its own Iceberg table, in order: create it, two commits, read it, its metadata tables,
   * time travel to the first commit in SQL and through the reader, a branch written and read three ways.
   */
  private static List<Form> icebergOwnForms(
      SparkSession spark, String table, Map<String, FirstSnapshot> firsts) {
    String ns = table.substring(0, table.lastIndexOf('.'));
    return List.of(
        new Form(
            "CREATE NAMESPACE",
            true,
            null,
            () -> sql(spark, "CREATE NAMESPACE IF NOT EXISTS " + ns)),
        new Form(
            "DROP TABLE IF EXISTS", true, null, () -> sql(spark, "DROP TABLE IF EXISTS " + table)),
        new Form(
            "CREATE TABLE USING iceberg",
            true,
            null,
            () ->
                sql(spark, "CREATE TABLE " + table + " (id BIGINT, amount BIGINT) USING iceberg")),
        new Form(
            "INSERT (first snapshot)",
            true,
            null,
            () -> sql(spark, "INSERT INTO " + table + " VALUES (1, 10), (2, 20)")),
        new Form(
            "insertInto (second snapshot)",
            true,
            null,
            () -> {
              spark
                  .sql("SELECT CAST(3 AS BIGINT) AS id, CAST(30 AS BIGINT) AS amount")
                  .write()
                  .insertInto(table);
              return null;
            }),
        new Form("SQL SELECT", true, null, () -> want(3L, count(spark, table))),
        new Form(
            "SQL .snapshots",
            true,
            null,
            () -> {
              List<org.apache.spark.sql.Row> rows =
                  spark
                      .sql(
                          "SELECT snapshot_id, CAST(committed_at AS STRING) FROM "
                              + table
                              + ".snapshots WHERE parent_id IS NULL")
                      .collectAsList();
              want(1, rows.size());
              firsts.put(
                  table, new FirstSnapshot(rows.get(0).getLong(0), rows.get(0).getString(1)));
              return firsts.get(table);
            }),
        new Form("SQL .history", true, null, () -> want(2L, count(spark, table + ".history"))),
        new Form(
            "spark.table .snapshots",
            true,
            null,
            () -> want(2L, spark.table(table + ".snapshots").count())),
        new Form(
            "VERSION AS OF <first snapshot>",
            true,
            null,
            () -> want(2L, count(spark, table + " VERSION AS OF " + firsts.get(table).id()))),
        new Form(
            "TIMESTAMP AS OF <first commit>",
            true,
            null,
            () ->
                want(
                    2L,
                    count(
                        spark,
                        table + " TIMESTAMP AS OF '" + firsts.get(table).committedAt() + "'"))),
        new Form(
            "reader option snapshot-id",
            true,
            null,
            () ->
                want(
                    2L,
                    spark
                        .read()
                        .option("snapshot-id", firsts.get(table).id())
                        .table(table)
                        .count())),
        new Form(
            "ALTER TABLE CREATE BRANCH b",
            true,
            null,
            () -> sql(spark, "ALTER TABLE " + table + " CREATE BRANCH b")),
        new Form(
            "INSERT INTO .branch_b",
            true,
            null,
            () -> sql(spark, "INSERT INTO " + table + ".branch_b VALUES (4, 40)")),
        new Form("SQL .branch_b", true, null, () -> want(4L, count(spark, table + ".branch_b"))),
        new Form(
            "VERSION AS OF 'b'",
            true,
            null,
            () -> want(4L, count(spark, table + " VERSION AS OF 'b'"))),
        new Form(
            "spark.table .branch_b",
            true,
            null,
            () -> want(4L, spark.table(table + ".branch_b").count())),
        new Form("main unchanged by the branch", true, null, () -> want(3L, count(spark, table))),
        new Form(
            "CALL ancestors_of (select)",
            true,
            null,
            () -> want(true, spark.sql(call("ancestors_of", table)).count() >= 2)),
        new Form(
            "CALL rewrite_manifests (maintain)",
            true,
            null,
            () -> sql(spark, call("rewrite_manifests", table))));
  }

  /** An Iceberg table procedure called on {@code table}, named as the procedure reads it: namespace.name. */
  private static String call(String procedure, String table) {
    return "CALL iceberg.system."
        + procedure
        + "(table => '"
        + table.substring(table.indexOf('.') + 1)
        + "')";
  }

  /** Everything another team tries on a team's Iceberg table; each refusal must name the table. */
  private static List<Form> icebergOthersForms(
      SparkSession spark, String table, FirstSnapshot first) {
    long snapshot = first == null ? 1L : first.id();
    String committed = first == null ? "2026-01-01 00:00:00" : first.committedAt();
    return List.of(
        new Form("SQL SELECT", false, table, () -> count(spark, table)),
        new Form("spark.table", false, table, () -> spark.table(table).collectAsList()),
        new Form("SQL .snapshots", false, table, () -> count(spark, table + ".snapshots")),
        new Form("SQL .history", false, table, () -> count(spark, table + ".history")),
        new Form(
            "spark.table .snapshots",
            false,
            table,
            () -> spark.table(table + ".snapshots").collectAsList()),
        new Form(
            "VERSION AS OF <snapshot id>",
            false,
            table,
            () -> count(spark, table + " VERSION AS OF " + snapshot)),
        new Form(
            "TIMESTAMP AS OF <commit time>",
            false,
            table,
            () -> count(spark, table + " TIMESTAMP AS OF '" + committed + "'")),
        new Form(
            "reader option snapshot-id",
            false,
            table,
            () -> spark.read().option("snapshot-id", snapshot).table(table).collectAsList()),
        new Form("SQL .branch_b", false, table, () -> count(spark, table + ".branch_b")),
        new Form(
            "VERSION AS OF 'b'", false, table, () -> count(spark, table + " VERSION AS OF 'b'")),
        new Form(
            "spark.table .branch_b",
            false,
            table,
            () -> spark.table(table + ".branch_b").collectAsList()),
        new Form(
            "ALTER TABLE CREATE BRANCH",
            false,
            table,
            () -> sql(spark, "ALTER TABLE " + table + " CREATE BRANCH stolen")),
        new Form(
            "ALTER TABLE DROP BRANCH b",
            false,
            table,
            () -> sql(spark, "ALTER TABLE " + table + " DROP BRANCH b")),
        new Form(
            "INSERT INTO .branch_b",
            false,
            table,
            () -> sql(spark, "INSERT INTO " + table + ".branch_b VALUES (7, 7)")),
        new Form(
            "INSERT", false, table, () -> sql(spark, "INSERT INTO " + table + " VALUES (7, 7)")),
        new Form("DROP TABLE", false, table, () -> sql(spark, "DROP TABLE " + table)),
        new Form("CALL ancestors_of", false, table, () -> sql(spark, call("ancestors_of", table))),
        new Form(
            "CALL expire_snapshots",
            false,
            table,
            () -> sql(spark, call("expire_snapshots", table))),
        new Form(
            "CALL rewrite_manifests",
            false,
            table,
            () -> sql(spark, call("rewrite_manifests", table))));
  }

  private static Object sql(SparkSession spark, String sql) {
    return spark.sql(sql).collectAsList();
  }

  private static long count(SparkSession spark, String from) {
    return spark.sql("SELECT count(*) FROM " + from).first().getLong(0);
  }

  /** An allowed form's value; a wrong one fails the form with both. */
  private static <T> T want(T expected, T actual) {
    if (!expected.equals(actual)) {
      throw new IllegalStateException("returned " + actual + ", expected " + expected);
    }
    return actual;
  }

  @Test
  @Order(5)
  void iceberg_jvmClient_teamWorksOnItsOwnTable_othersAreRefusedEveryForm() {
    record Team(SparkSession spark, String name, String own, String other) {}
    List<Team> teams =
        List.of(
            new Team(alice, "alice", "iceberg.finance.ledger", "iceberg.marketing.campaigns"),
            new Team(bob, "bob", "iceberg.marketing.campaigns", "iceberg.finance.ledger"));
    Map<String, FirstSnapshot> firsts = new LinkedHashMap<>();
    List<Executable> checks = new ArrayList<>();
    for (Team t : teams) {
      for (Form form : icebergOwnForms(t.spark(), t.own(), firsts)) {
        checks.add(run("JVM client, " + t.name() + ", own " + t.own(), t.name(), form));
      }
    }
    for (Team t : teams) {
      for (Form form : icebergOthersForms(t.spark(), t.other(), firsts.get(t.other()))) {
        checks.add(run("JVM client, " + t.name() + ", " + t.other(), t.name(), form));
      }
    }
    // Nothing the refused forms tried reached the tables: the owners see them as they left them.
    for (Team t : teams) {
      checks.add(
          run(
              "JVM client, " + t.name() + ", own " + t.own() + " afterwards",
              t.name(),
              new Form(
                  "main, branch b and its refs as left",
                  true,
                  null,
                  () ->
                      List.of(
                          want(3L, count(t.spark(), t.own())),
                          want(4L, count(t.spark(), t.own() + ".branch_b")),
                          want(
                              "b,main",
                              t.spark()
                                  .sql(
                                      "SELECT concat_ws(',', sort_array(collect_list(name))) FROM "
                                          + t.own()
                                          + ".refs")
                                  .first()
                                  .getString(0))))));
    }
    assertAll(checks);
  }

  /** Runs one form now and returns the check of its outcome. */
  private static Executable run(String label, String user, Form form) {
    Object value = null;
    Throwable error = null;
    try {
      value = form.run().call();
    } catch (Throwable t) {
      error = t;
    }
    return outcome(label + ": " + form.name(), user, form.allowed(), form.needle(), value, error);
  }

  @Test
  @Order(6)
  void pyspark35_onTheMixedServer_eachTeamWorksOnItsOwnLakehouseTables_andIsRefusedTheOthers()
      throws Exception {
    PySparkEnv.requireVenv();
    ConnectRequests adminRequests = requests("admin");
    for (String ns : List.of("iceberg.finance", "iceberg.marketing", "finance", "marketing")) {
      adminRequests.sql("CREATE NAMESPACE IF NOT EXISTS " + ns);
    }
    String out =
        runPySpark(
            PYSPARK_35,
            LAKEHOUSE_PROGRAM,
            mixedProxy,
            "--case",
            "alice:iceberg.finance.py_ledger:iceberg.marketing.py_campaigns",
            "--case",
            "alice:spark_catalog.finance.py_trips:spark_catalog.marketing.py_visits",
            "--case",
            "bob:iceberg.marketing.py_campaigns:iceberg.finance.py_ledger",
            "--case",
            "bob:spark_catalog.marketing.py_visits:spark_catalog.finance.py_trips");
    // Per user: Iceberg 12 own and 10 others' forms, Hudi 9 own and 7 others'.
    assertPySparkForms(PYSPARK_35, out, 2 * (12 + 10 + 9 + 7));
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
