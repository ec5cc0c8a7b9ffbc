package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.Sparkgate;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.spark.SparkUnsupportedOperationException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.storage.StorageLevel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Ways around the shipped shared-server policy, tried with the real JVM client against the real Spark 4.0
 * server. Direct to the server, the danger is shown to be real: a script transform runs a shell command as the
 * server's user, a temporary view reads a local file, a relative path reads the server's working directory,
 * {@code IDENTIFIER('reflect')} calls Java. Through Sparkgate every way in (script transforms in each SQL form,
 * local paths in SQL, options and the DataFrame API, config keys in backticks, Java calls under other names,
 * global temporary views, dropping another session's entries from Spark's shared cache) is refused under the
 * rule that owns it, with a message that names the rule and says what to do instead, while ordinary SQL and
 * DataFrame work passes (including after a USE that Spark refused).
 *
 * <p>An attempt that would run a command or write a file aims it at a marker path, so a refusal that came only
 * after the damage was done (a failed query rather than a refused one) fails the test too.
 */
@ExtendWith(SparkServerExtension.class)
class BypassIT {
  @TempDir static Path dir;
  private static Path secret;
  private static String serverLogName;
  private static Path xsd;
  private static int serverPort;
  private static Sparkgate proxy;
  private static SparkSession direct;
  private static SparkSession spark;

  /** Sessions whose cache entries the attacks aim at: one direct to the server, one through Sparkgate. */
  private static SparkSession directVictim;

  private static SparkSession victim;

  private static final List<String> SECRET_LINES =
      List.of("root-password=hunter2", "api-key=s3cr3t");

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    secret = dir.resolve("secret.txt");
    Files.write(secret, SECRET_LINES);
    // The server runs in its work directory, where it writes its log: a relative path a user can
    // guess.
    serverLogName = server.logFile().getFileName().toString();
    serverPort = server.port();
    // An XML schema on the server's file system: rows whose <a> is not an integer fail it.
    xsd = dir.resolve("rows.xsd");
    Files.writeString(
        xsd,
        "<?xml version=\"1.0\"?>"
            + "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\">"
            + "<xs:element name=\"row\"><xs:complexType><xs:sequence>"
            + "<xs:element name=\"a\" type=\"xs:int\"/>"
            + "</xs:sequence></xs:complexType></xs:element></xs:schema>");
    proxy =
        Sparkgate.start(
            ProxyConfigs.write(
                dir,
                ProxyConfigs.PLAINTEXT_LISTENER,
                ProxyConfigs.backend(server.port()),
                ProxyConfigs.policy("shared-server.yaml")));
    direct = SparkClients.connect(server.directUrl());
    // An XML table both rows of which read without the XSD, made around the proxy.
    Path xml = dir.resolve("rows.xml");
    Files.writeString(xml, "<rows><row><a>1</a></row><row><a>x</a></row></rows>");
    direct.sql(
        "CREATE TABLE IF NOT EXISTS bypass_xml (a STRING) USING xml OPTIONS (rowTag 'row', path '"
            + xml
            + "')");
    if (direct.table("bypass_xml").count() != 2) throw new AssertionError("bypass_xml: not 2 rows");
    spark = SparkClients.connect("sc://127.0.0.1:" + proxy.port());
    directVictim = SparkClients.connect(server.directUrl());
    victim = SparkClients.connect("sc://127.0.0.1:" + proxy.port());
    // Tables whose cache entries are shared by every session: one for the attacks shown directly,
    // one
    // for those tried through Sparkgate, so that neither run disturbs the other's.
    for (String t : List.of("bypass_cached_direct", "bypass_cached_proxied", "bypass_plain")) {
      sql(direct, "CREATE TABLE IF NOT EXISTS " + t + " (a INT) USING parquet");
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (direct != null) direct.sql("DROP TABLE IF EXISTS bypass_xml");
    ProxyConfigs.closeAll(direct, spark, directVictim, victim, proxy);
  }

  // --- direct to the server: what the policy must stop is real
  // ------------------------------------------------

  @Test
  void directScriptTransformRunsAShellCommandAsTheServersUser() throws Exception {
    List<Row> rows =
        direct.sql("SELECT TRANSFORM(id) USING 'id -un' AS (who) FROM range(1)").collectAsList();
    assertEquals(1, rows.size());
    assertEquals(shell("id -un"), rows.get(0).getString(0));
    assertEquals(System.getProperty("user.name"), rows.get(0).getString(0));
  }

  @Test
  void directTemporaryViewReadsALocalFile() {
    direct.sql(
        "CREATE OR REPLACE TEMPORARY VIEW leaked USING text OPTIONS (path '" + secret + "')");
    List<String> lines =
        direct.sql("SELECT value FROM leaked").collectAsList().stream()
            .map(r -> r.getString(0))
            .toList();
    assertEquals(SECRET_LINES, lines);
    assertTrue(
        direct.sql("SELECT count(*) FROM text.`/etc/passwd`").collectAsList().get(0).getLong(0)
            > 0);
  }

  @Test
  void directRelativePathReadsTheServersWorkingDirectory() {
    long matching =
        direct.read().text(serverLogName).filter("value LIKE '%SparkConnectServer%'").count();
    assertTrue(matching > 0, "the server's own log, read by its relative name");
  }

  /** Spark 4.0 takes IDENTIFIER for a function name, back-quoted or not: a name a name-matching rule may miss. */
  @Test
  void directIdentifierCallsReflect() {
    String home =
        direct
            .sql("SELECT IDENTIFIER('`reflect`')('java.lang.System','getProperty','user.home')")
            .collectAsList()
            .get(0)
            .getString(0);
    assertEquals(System.getProperty("user.home"), home);
    assertEquals(
        home,
        direct
            .sql("SELECT IDENTIFIER('reflect')('java.lang.System','getProperty','user.home')")
            .collectAsList()
            .get(0)
            .getString(0));
  }

  // --- through Sparkgate with the shipped policy
  // ----------------------------------------------------------------

  /** One attempt, given a marker for what it would run or write. */
  interface Attempt {
    void run(SparkSession spark, Marker marker) throws Exception;
  }

  /**
   * A path under the test's directory that an attempt makes exist if it gets to run: script transforms touch
   * it, writes write to it. Remembers whether the attempt asked for it, that is whether it can tell.
   */
  static final class Marker {
    private final Path path;
    private boolean used;

    Marker(Path path) {
      this.path = path;
    }

    @Override
    public String toString() {
      used = true;
      return path.toString();
    }

    /** Whether the attempt ran: meaningful only if the attempt used the marker. */
    boolean ran() {
      return Files.exists(path);
    }
  }

  /** An attack and the rules that may refuse it: the first is the one that owns it, others are acceptable. */
  record Attack(String name, List<String> rules, Attempt attempt) {
    @Override
    public String toString() {
      return name;
    }
  }

  private static Attack attack(String name, String rule, Attempt attempt) {
    // reflect and friends are refused by name ahead of the function allowlist, which does not list
    // them either.
    List<String> rules =
        rule.equals("no-reflection") ? List.of(rule, "functions-allowlist") : List.of(rule);
    return new Attack(name, rules, attempt);
  }

  /**
   * For ways in whose text alone does not say what they run (a name computed at run time, SQL held in a
   * variable): refused as not understood, or under the rule for what it would run.
   */
  private static Attack opaque(String name, String rule, Attempt attempt) {
    return new Attack(name, List.of(rule, "no-unclassified", "statements-allowlist"), attempt);
  }

  /** Runs SQL to the end: commands run when spark.sql is called, queries when their result is collected. */
  private static List<Row> sql(SparkSession s, String text) {
    return s.sql(text).collectAsList();
  }

  /** An attempt's proof that it ran: the server's home directory, read by a Java call. */
  private static void assertHome(List<Row> rows) {
    assertEquals(System.getProperty("user.home"), rows.get(0).getString(0));
  }

  /** A shell command for a script transform: reads its input, then leaves the marker. */
  private static String touch(Marker marker) {
    return "cat >/dev/null; touch " + marker;
  }

  private static final String REFLECT_ARGS = "('java.lang.System','getProperty','user.home')";

  static Stream<Attack> attacks() {
    String transform = "no-script-transform";
    String paths = "paths-allowlist";
    String config = "config-allowlist";
    String javaCalls = "no-reflection";
    String globalViews = "no-global-temp-views";
    String substitution = "no-variable-substitution";
    String sharedCache = "no-shared-cache-ops";
    return Stream.of(
        // Script transforms: a shell command run by the server's user.
        attack(
            "SELECT TRANSFORM ... USING",
            transform,
            (s, m) ->
                sql(s, "SELECT TRANSFORM(id) USING '" + touch(m) + "' AS (who) FROM range(1)")),
        attack(
            "select transform, lower case, comments and line breaks",
            transform,
            (s, m) ->
                sql(
                    s,
                    "select/**/transform ( id )\n-- x\nusing '"
                        + touch(m)
                        + "' as (who) from range(1)")),
        attack(
            "TRANSFORM with ROW FORMAT DELIMITED",
            transform,
            (s, m) ->
                sql(
                    s,
                    "SELECT TRANSFORM(id, id) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' USING '"
                        + touch(m)
                        + "' AS (a, b) FROM range(1)")),
        attack(
            "FROM ... SELECT TRANSFORM",
            transform,
            (s, m) ->
                sql(s, "FROM range(1) SELECT TRANSFORM(id) USING '" + touch(m) + "' AS (who)")),
        attack(
            "FROM ... MAP ... USING",
            transform,
            (s, m) -> sql(s, "FROM range(1) MAP id USING '" + touch(m) + "' AS x")),
        attack(
            "FROM ... REDUCE ... USING",
            transform,
            (s, m) -> sql(s, "FROM range(1) REDUCE id USING '" + touch(m) + "' AS x")),
        attack(
            "MAP ... USING ... FROM",
            transform,
            (s, m) -> sql(s, "MAP id USING '" + touch(m) + "' AS x FROM range(1)")),
        attack(
            "TRANSFORM in a subquery",
            transform,
            (s, m) ->
                sql(
                    s,
                    "SELECT * FROM (SELECT TRANSFORM(id) USING '"
                        + touch(m)
                        + "' AS (who) FROM range(1)) t")),
        attack(
            "TRANSFORM in a CTE",
            transform,
            (s, m) ->
                sql(
                    s,
                    "WITH w AS (SELECT TRANSFORM(id) USING '"
                        + touch(m)
                        + "' AS (who) FROM range(1)) "
                        + "SELECT who FROM w")),
        attack(
            "TRANSFORM in an IN subquery",
            transform,
            (s, m) ->
                sql(
                    s,
                    "SELECT 1 WHERE 'x' IN (SELECT TRANSFORM(id) USING '"
                        + touch(m)
                        + "' AS (who) "
                        + "FROM range(1))")),
        attack(
            "TRANSFORM under a DataFrame built on spark.sql",
            transform,
            (s, m) ->
                s.sql("SELECT TRANSFORM(id) USING '" + touch(m) + "' AS (who) FROM range(1)")
                    .filter("who IS NOT NULL")
                    .selectExpr("upper(who)")
                    .limit(1)
                    .collectAsList()),
        attack(
            "TRANSFORM in a temporary view",
            transform,
            (s, m) -> {
              sql(
                  s,
                  "CREATE OR REPLACE TEMPORARY VIEW tv AS SELECT TRANSFORM(id) USING '"
                      + touch(m)
                      + "' AS (who) "
                      + "FROM range(1)");
              s.table("tv").collectAsList();
            }),
        attack(
            "TRANSFORM in a SQL table function",
            transform,
            (s, m) -> {
              sql(
                  s,
                  "CREATE OR REPLACE TEMPORARY FUNCTION tf() RETURNS TABLE (who STRING) RETURN "
                      + "SELECT TRANSFORM(id) USING '"
                      + touch(m)
                      + "' AS (who) FROM range(1)");
              sql(s, "SELECT * FROM tf()");
            }),
        opaque(
            "TRANSFORM in EXECUTE IMMEDIATE 'literal'",
            transform,
            (s, m) ->
                sql(
                    s,
                    "EXECUTE IMMEDIATE \"SELECT TRANSFORM(id) USING '"
                        + touch(m)
                        + "' AS (who) FROM range(1)\"")),
        opaque(
            "TRANSFORM in EXECUTE IMMEDIATE of a session variable",
            transform,
            (s, m) -> {
              sql(
                  s,
                  "DECLARE OR REPLACE VARIABLE q STRING DEFAULT \"SELECT TRANSFORM(id) USING '"
                      + touch(m)
                      + "' AS (who) FROM range(1)\"");
              sql(s, "EXECUTE IMMEDIATE q");
            }),

        // The server's local file system.
        attack(
            "CREATE TEMPORARY VIEW USING text OPTIONS (path '/etc/passwd')",
            paths,
            (s, m) -> {
              sql(s, "CREATE TEMPORARY VIEW pw USING text OPTIONS (path '/etc/passwd')");
              sql(s, "SELECT count(*) FROM pw");
            }),
        attack(
            "CREATE TEMPORARY VIEW USING text over a file written by the test",
            paths,
            (s, m) -> {
              sql(
                  s,
                  "CREATE OR REPLACE TEMPORARY VIEW leaked USING text OPTIONS (path '"
                      + secret
                      + "')");
              sql(s, "SELECT value FROM leaked");
            }),
        attack(
            "OPTIONS (PATH ...), key in upper case",
            paths,
            (s, m) ->
                sql(
                    s,
                    "CREATE OR REPLACE TEMPORARY VIEW leaked USING text OPTIONS (PATH '"
                        + secret
                        + "')")),
        attack(
            "OPTIONS (`path` ...), key in backticks",
            paths,
            (s, m) ->
                sql(
                    s,
                    "CREATE OR REPLACE TEMPORARY VIEW leaked USING text OPTIONS (`path` '"
                        + secret
                        + "')")),
        attack(
            "OPTIONS ('path' = ...), key as a string",
            paths,
            (s, m) ->
                sql(
                    s,
                    "CREATE OR REPLACE TEMPORARY VIEW leaked USING csv OPTIONS ('path' = '"
                        + secret
                        + "')")),
        attack(
            "spark.read.text(\"/etc/passwd\")",
            paths,
            (s, m) -> s.read().text("/etc/passwd").collectAsList()),
        attack(
            "spark.read.format(text).option(path, file:///etc/passwd).load()",
            paths,
            (s, m) ->
                s.read()
                    .format("text")
                    .option("path", "file:///etc/passwd")
                    .load()
                    .collectAsList()),
        attack(
            "spark.read.format(text).option(PATH, ...).load(), key in upper case",
            paths,
            (s, m) ->
                s.read().format("text").option("PATH", secret.toString()).load().collectAsList()),
        attack(
            "spark.read.text of a relative path (the server's log)",
            paths,
            (s, m) -> s.read().text(serverLogName).collectAsList()),
        attack(
            "SELECT * FROM text.`/etc/passwd`",
            paths,
            (s, m) -> sql(s, "SELECT * FROM text.`/etc/passwd`")),
        attack(
            "SELECT * FROM csv.`file:/etc/passwd`",
            paths,
            (s, m) -> sql(s, "SELECT * FROM csv.`file:/etc/passwd`")),
        attack(
            "SELECT * FROM text.`relative path`",
            paths,
            (s, m) -> sql(s, "SELECT * FROM text.`" + serverLogName + "`")),
        attack(
            "spark.table(\"text.`/etc/passwd`\")",
            paths,
            (s, m) -> s.table("text.`/etc/passwd`").collectAsList()),
        attack(
            "spark.read.table(\"text.`<relative path>`\")",
            paths,
            (s, m) -> s.read().table("text.`" + serverLogName + "`").collectAsList()),
        opaque(
            "SELECT * FROM IDENTIFIER('text.`...`')",
            paths,
            (s, m) -> sql(s, "SELECT * FROM IDENTIFIER('text.`" + secret + "`')")),
        opaque(
            "SELECT * FROM IDENTIFIER('te' || 'xt.`...`')",
            paths,
            (s, m) -> sql(s, "SELECT * FROM IDENTIFIER('te' || 'xt.`" + secret + "`')")),
        opaque(
            "SELECT * FROM IDENTIFIER(:t) with t bound to text.`...`",
            paths,
            (s, m) ->
                s.sql(
                        "SELECT * FROM IDENTIFIER(:t)",
                        Map.<String, Object>of("t", "text.`" + secret + "`"))
                    .collectAsList()),
        attack(
            "CREATE TABLE ... USING text LOCATION '<local file>'",
            paths,
            (s, m) -> {
              sql(
                  s,
                  "CREATE TABLE IF NOT EXISTS bypass_ext (value STRING) USING text LOCATION '"
                      + secret
                      + "'");
              sql(s, "SELECT * FROM bypass_ext");
            }),
        attack(
            "INSERT OVERWRITE DIRECTORY '<local dir>'",
            paths,
            (s, m) -> sql(s, "INSERT OVERWRITE DIRECTORY '" + m + "' USING text SELECT 'x'")),
        attack(
            "DataFrame write.text('<local dir>')",
            paths,
            (s, m) -> s.range(1).selectExpr("'x' AS value").write().text(m.toString())),
        attack(
            "spark.read.option(rowValidationXSDPath, <local file>).table(t): an option that opens a file",
            paths,
            (s, m) -> {
              // The table is an ordinary one (made directly, in start()), so the only path in the
              // request is the option's; that the server read the XSD shows in the row it dropped.
              List<Row> valid =
                  s.read()
                      .option("mode", "DROPMALFORMED")
                      .option("rowValidationXSDPath", xsd.toString())
                      .table("bypass_xml")
                      .collectAsList();
              assertEquals(
                  1, valid.size(), "only the row the server's local XSD accepts: " + valid);
              assertEquals("1", valid.get(0).getString(0));
            }),

        // Session configuration.
        attack(
            "SET `spark.sql.catalog.x`=... (key in backticks)",
            config,
            (s, m) -> sql(s, "SET `spark.sql.catalog.x`=com.example.Evil")),
        attack(
            "SET `spark.sql.catalog.x` = ... (backticks and spaces)",
            config,
            (s, m) -> sql(s, "SET `spark.sql.catalog.x`   =   com.example.Evil")),
        attack(
            "SET spark.sql.catalog.x=...",
            config,
            (s, m) -> sql(s, "SET spark.sql.catalog.x=com.example.Evil")),
        attack(
            "spark.conf.set(spark.sql.catalog.x, ...)",
            config,
            (s, m) -> s.conf().set("spark.sql.catalog.x", "com.example.Evil")),
        // A listed key in another case is another key to Spark (keys are case-sensitive): not the
        // reviewed setting, and not even validated, as the value shows.
        attack(
            "spark.conf.set(Spark.Sql.Shuffle.Partitions, ...), a listed key in another case",
            config,
            (s, m) -> {
              s.conf().set("Spark.Sql.Shuffle.Partitions", "not-a-number");
              assertEquals("not-a-number", s.conf().get("Spark.Sql.Shuffle.Partitions"));
            }),
        attack(
            "SET SPARK.SQL.SHUFFLE.PARTITIONS=..., a listed key in upper case",
            config,
            (s, m) -> sql(s, "SET SPARK.SQL.SHUFFLE.PARTITIONS=not-a-number")),

        // Functions that call Java.
        attack("SELECT reflect(...)", javaCalls, (s, m) -> sql(s, "SELECT reflect" + REFLECT_ARGS)),
        attack(
            "SELECT `ReFlect`(...)",
            javaCalls,
            (s, m) -> sql(s, "SELECT `ReFlect`" + REFLECT_ARGS)),
        attack(
            "SELECT java_method(...)",
            javaCalls,
            (s, m) -> sql(s, "SELECT java_method" + REFLECT_ARGS)),
        attack(
            "SELECT IDENTIFIER('`reflect`')(...)",
            javaCalls,
            (s, m) -> sql(s, "SELECT IDENTIFIER('`reflect`')" + REFLECT_ARGS)),
        attack(
            "SELECT IDENTIFIER('reflect')(...)",
            javaCalls,
            (s, m) -> sql(s, "SELECT IDENTIFIER('reflect')" + REFLECT_ARGS)),
        opaque(
            "SELECT IDENTIFIER('re' || 'flect')(...)",
            javaCalls,
            (s, m) -> sql(s, "SELECT IDENTIFIER('re' || 'flect')" + REFLECT_ARGS)),
        opaque(
            "SELECT IDENTIFIER(f)(...) with a session variable f = 'reflect'",
            javaCalls,
            (s, m) -> {
              sql(s, "DECLARE OR REPLACE VARIABLE f STRING DEFAULT 'reflect'");
              sql(s, "SELECT IDENTIFIER(f)" + REFLECT_ARGS);
            }),
        opaque(
            "SELECT IDENTIFIER(:f)(...) with f bound to 'reflect'",
            javaCalls,
            (s, m) ->
                s.sql(
                        "SELECT IDENTIFIER(:f)" + REFLECT_ARGS,
                        Map.<String, Object>of("f", "reflect"))
                    .collectAsList()),
        opaque(
            "EXECUTE IMMEDIATE of a session variable holding SELECT reflect(...)",
            javaCalls,
            (s, m) -> {
              sql(
                  s,
                  "DECLARE OR REPLACE VARIABLE q STRING DEFAULT \"SELECT reflect"
                      + REFLECT_ARGS
                      + "\"");
              sql(s, "EXECUTE IMMEDIATE q");
            }),
        attack(
            "reflect in a SQL function's body",
            javaCalls,
            (s, m) -> {
              sql(
                  s,
                  "CREATE OR REPLACE TEMPORARY FUNCTION home() RETURNS STRING RETURN reflect"
                      + REFLECT_ARGS);
              sql(s, "SELECT home()");
            }),
        attack(
            "DataFrame selectExpr(reflect(...))",
            javaCalls,
            (s, m) -> s.range(1).selectExpr("reflect" + REFLECT_ARGS).collectAsList()),
        attack(
            "DataFrame functions.call_function(\"reflect\", ...)",
            javaCalls,
            (s, m) ->
                s.range(1)
                    .select(
                        functions.call_function(
                            "reflect",
                            functions.lit("java.lang.System"),
                            functions.lit("getProperty"),
                            functions.lit("user.home")))
                    .collectAsList()),

        // Variable substitution: Spark rewrites ${...} in every string its session parser reads
        // before
        // parsing it, so a literal can swallow what looks like a comment and make it live SQL, and
        // a
        // literal can read the server's environment and settings. Each is refused unread.
        attack(
            "SQL whose substitution turns a comment into a script transform",
            substitution,
            (s, m) ->
                sql(
                    s,
                    "SELECT '${a'--'}' AS who UNION ALL SELECT TRANSFORM(id) USING '"
                        + touch(m)
                        + "' AS (who) FROM range(1)")),
        attack(
            "selectExpr whose substitution turns a comment into java_method",
            substitution,
            (s, m) ->
                assertHome(
                    s.range(1)
                        .selectExpr(
                            "'${a'--'}'||java_method('java.lang.System','getProperty','user.home')")
                        .collectAsList())),
        attack(
            "filter string whose substitution turns a block comment into a condition",
            substitution,
            (s, m) ->
                assertEquals(
                    1,
                    s.range(1)
                        .filter(
                            "'${x'/*'}'='' AND java_method('java.lang.System','getProperty','user.home')"
                                + " IS NOT NULL --*/")
                        .count())),
        attack(
            "expr() in agg and orderBy with substitution",
            substitution,
            (s, m) ->
                s.range(2)
                    .groupBy()
                    .agg(functions.expr("max('${a'--'}'||id)"))
                    .orderBy(
                        functions.expr("'${a'--'}'||reflect('java.lang.System','getenv','HOME')"))
                    .collectAsList()),
        attack(
            "the server's environment through an expression string",
            substitution,
            (s, m) ->
                assertEquals(
                    System.getenv("HOME"),
                    s.range(1).selectExpr("'${env:HOME}'").collectAsList().get(0).getString(0))),
        attack(
            "the server's system properties and settings through SQL",
            substitution,
            (s, m) -> {
              Row r = sql(s, "SELECT '${system:user.name}', '${spark.sql.warehouse.dir}'").get(0);
              assertEquals(System.getProperty("user.name"), r.getString(0));
              assertFalse(r.getString(1).isEmpty());
            }),
        attack(
            "turning substitution off in the session",
            "no-parser-settings",
            (s, m) -> sql(s, "SET spark.sql.variable.substitute=false")),

        // Global temporary views: shared by every session on the server.
        attack(
            "CREATE GLOBAL TEMP VIEW",
            globalViews,
            (s, m) -> sql(s, "CREATE OR REPLACE GLOBAL TEMP VIEW gv AS SELECT 1 AS a")),
        attack(
            "DataFrame createOrReplaceGlobalTempView",
            globalViews,
            (s, m) -> s.range(1).createOrReplaceGlobalTempView("gv")),

        // Spark's cache: one per server, shared by every session.
        attack(
            "df.unpersist() of a DataFrame another session persisted",
            sharedCache,
            (s, m) -> {
              // Each run its own plan: the direct run drops its victim's entry, which must not be
              // the proxied victim's.
              long k = s == direct ? 7 : 11;
              Dataset<Row> theirs = victimOf(s).range(100).selectExpr("id * " + k + " AS x");
              theirs.persist();
              assertTrue(theirs.storageLevel().useMemory(), "the victim's DataFrame is cached");
              s.range(100).selectExpr("id * " + k + " AS x").unpersist();
              assertEquals(
                  StorageLevel.NONE(), theirs.storageLevel(), "the victim's entry is gone");
            }),
        attack(
            "CACHE TABLE of a table another session cached, then UNCACHE TABLE",
            sharedCache,
            (s, m) -> {
              String table = s == direct ? "bypass_cached_direct" : "bypass_cached_proxied";
              sql(victimOf(s), "CACHE TABLE " + table);
              sql(s, "CACHE TABLE " + table); // already cached: Spark does nothing
              sql(s, "UNCACHE TABLE " + table);
              assertFalse(victimOf(s).catalog().isCached(table), "the victim's entry is gone");
            }),
        attack(
            "catalog.cacheTable of a table another session cached, then catalog.uncacheTable",
            sharedCache,
            (s, m) -> {
              String table = s == direct ? "bypass_cached_direct" : "bypass_cached_proxied";
              victimOf(s).catalog().cacheTable(table);
              s.catalog().cacheTable(table);
              s.catalog().uncacheTable(table);
              assertFalse(victimOf(s).catalog().isCached(table), "the victim's entry is gone");
            }));
  }

  /** The session whose cache entries an attack run as {@code attacker} aims at. */
  private static SparkSession victimOf(SparkSession attacker) {
    return attacker == direct ? directVictim : victim;
  }

  /**
   * Each way in works against the bare server: a refusal through the proxy then means the policy stopped it,
   * not that Spark would have failed it anyway.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("attacks")
  void worksDirectly(Attack attack) throws Exception {
    Marker marker =
        new Marker(dir.resolve("direct-" + Integer.toHexString(attack.name().hashCode())));
    attack.attempt().run(direct, marker);
    if (marker.used) {
      assertTrue(marker.ran(), attack.name() + ": ran directly but left no " + marker.path);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("attacks")
  void isRefused(Attack attack) {
    Marker marker =
        new Marker(dir.resolve("proxied-" + Integer.toHexString(attack.name().hashCode())));
    assertAll(
        attack.name(),
        () -> refused(attack.name(), attack.rules(), () -> attack.attempt().run(spark, marker)),
        () -> assertFalse(marker.ran(), "it ran on the server: " + marker.path + " exists"));
  }

  /** An action that may throw anything (a client call). */
  interface Action {
    void run() throws Exception;
  }

  /** Words that start a remedy in a refusal message: what the user can do instead. */
  private static final Pattern REMEDY =
      Pattern.compile("(?i)\\b(use|ask|read|run|leave|instead)\\b");

  private static void refused(String name, List<String> rules, Action action) {
    Exception e = assertThrows(Exception.class, action::run, name + ": not refused");
    String shown = e.getMessage();
    System.out.println(name + ": client shows (" + e.getClass().getName() + "): " + shown);
    assertTrue(shown != null && shown.contains("[SPARKGATE_POLICY_DENIED]"), name + ": " + shown);
    assertTrue(
        rules.stream().anyMatch(rule -> shown.contains("rule '" + rule + "'")),
        name + ": not by " + rules + ": " + shown);
    assertTrue(shown.contains("SQLSTATE: 42501"), shown);
    assertFalse(shown.contains("INTERNAL_ERROR"), shown);
    String reason = shown.substring(shown.indexOf("refused this request:") + 1);
    assertTrue(REMEDY.matcher(reason).find(), name + ": no remedy in: " + shown);
  }

  // --- an empty addListener, as raw protos (no client sends it)
  // -------------------------------------------------------------------------------------------------------

  /** StreamingQueryManagerCommand.add_listener with no listener in it, as an ExecutePlan request. */
  private static byte[] emptyAddListener() {
    return io.sparkgate.proto.spark.ExecutePlanRequest.newBuilder()
        .setSessionId(java.util.UUID.randomUUID().toString())
        .setUserContext(io.sparkgate.proto.spark.UserContext.newBuilder().setUserId("bypass"))
        .setPlan(
            io.sparkgate.proto.spark.Plan.newBuilder()
                .setCommand(
                    io.sparkgate.proto.spark.Command.newBuilder()
                        .setStreamingQueryManagerCommand(
                            io.sparkgate.proto.spark.StreamingQueryManagerCommand.newBuilder()
                                .setAddListener(
                                    io.sparkgate.proto.spark.StreamingQueryManagerCommand
                                        .StreamingQueryListenerCommand.getDefaultInstance()))))
        .build()
        .toByteArray();
  }

  /** Sends one ExecutePlan request and returns how the call ended. */
  private static io.grpc.Status execute(int port, byte[] request) throws Exception {
    io.grpc.ManagedChannel channel =
        io.grpc.Grpc.newChannelBuilderForAddress(
                "127.0.0.1", port, io.grpc.InsecureChannelCredentials.create())
            .build();
    try {
      java.util.Iterator<byte[]> responses =
          io.grpc.stub.ClientCalls.blockingServerStreamingCall(
              channel,
              ConnectRequests.EXECUTE_PLAN,
              io.grpc.CallOptions.DEFAULT.withDeadlineAfter(
                  60, java.util.concurrent.TimeUnit.SECONDS),
              request);
      responses.forEachRemaining(r -> {});
      return io.grpc.Status.OK;
    } catch (io.grpc.StatusRuntimeException e) {
      return e.getStatus();
    } finally {
      channel.shutdownNow().awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
    }
  }

  /**
   * The server takes an empty addListener and acts on it: it runs Java deserialization over the missing
   * payload (and fails there, in the server's own code, not with a refusal).
   */
  @Test
  void directEmptyAddListenerReachesTheServersListenerCode() throws Exception {
    io.grpc.Status status = execute(serverPort, emptyAddListener());
    System.out.println("empty addListener, direct: " + status);
    assertFalse(status.isOk(), "an empty listener cannot be added: " + status);
    assertTrue(
        status.getCode() != io.grpc.Status.Code.PERMISSION_DENIED
            && !String.valueOf(status.getDescription()).contains("SPARKGATE"),
        status.toString());
  }

  @Test
  void emptyAddListenerIsRefusedAsUnreadable() throws Exception {
    io.grpc.Status status = execute(proxy.port(), emptyAddListener());
    System.out.println("empty addListener, through Sparkgate: " + status);
    assertEquals(io.grpc.Status.Code.PERMISSION_DENIED, status.getCode(), status.toString());
    assertTrue(
        String.valueOf(status.getDescription()).contains("no-unclassified"), status.toString());
  }

  // --- ordinary work still passes through Sparkgate
  // -------------------------------------------------------------

  record Work(String name, Action action) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Work> ordinaryWork() {
    return Stream.of(
        new Work(
            "GROUP BY over range",
            () -> {
              List<Row> rows =
                  sql(spark, "SELECT id % 3 AS k, count(*) FROM range(30) GROUP BY k ORDER BY k");
              assertEquals(3, rows.size());
              rows.forEach(r -> assertEquals(10L, r.getLong(1)));
            }),
        new Work(
            "SET spark.sql.shuffle.partitions=8",
            () -> {
              sql(spark, "SET spark.sql.shuffle.partitions=8");
              assertEquals("8", spark.conf().get("spark.sql.shuffle.partitions"));
            }),
        new Work(
            "SET `spark.sql.shuffle.partitions` = 9 (the listed key, unquoted and trimmed as Spark does)",
            () -> {
              sql(spark, "SET `spark.sql.shuffle.partitions` =  9");
              assertEquals("9", spark.conf().get("spark.sql.shuffle.partitions"));
            }),
        new Work(
            "SET TIME ZONE 'UTC'",
            () -> {
              sql(spark, "SET TIME ZONE 'UTC'");
              assertEquals("UTC", spark.conf().get("spark.sql.session.timeZone"));
            }),
        new Work(
            "CREATE TEMPORARY FUNCTION ... RETURN (a SQL function), then call it",
            () -> {
              sql(spark, "CREATE OR REPLACE TEMPORARY FUNCTION two() RETURNS INT RETURN 1 + 1");
              assertEquals(3, sql(spark, "SELECT two() + 1").get(0).getInt(0));
            }),
        new Work(
            "CREATE TEMPORARY FUNCTION plus1(x INT) ... reaches the server",
            () -> {
              // The shared server loads Iceberg's SQL extensions, whose parser (1.10) lacks
              // parseRoutineParam: there a SQL function with parameters fails with an empty
              // UnsupportedOperationException. What is checked is that the proxy forwards it and
              // fails only as the bare server does; where it works, it is called.
              String create =
                  "CREATE OR REPLACE TEMPORARY FUNCTION plus1(x INT) RETURNS INT RETURN x + 1";
              try {
                sql(spark, create);
              } catch (SparkUnsupportedOperationException e) {
                assertFalse(String.valueOf(e.getMessage()).contains("SPARKGATE"), e.getMessage());
                assertThrows(SparkUnsupportedOperationException.class, () -> sql(direct, create));
                return;
              }
              assertEquals(2, sql(spark, "SELECT plus1(1)").get(0).getInt(0));
            }),
        new Work(
            "CREATE TEMPORARY VIEW AS SELECT, then read it",
            () -> {
              sql(spark, "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1 AS a");
              assertEquals(1, sql(spark, "SELECT a FROM v").get(0).getInt(0));
              assertEquals(1, spark.table("v").collectAsList().get(0).getInt(0));
            }),
        new Work(
            "the higher-order function transform(array, lambda), not a script transform",
            () -> {
              List<Row> rows = sql(spark, "SELECT transform(array(1, 2), x -> x + 1) AS a");
              assertEquals(List.of(2, 3), rows.get(0).getList(0));
            }),
        new Work(
            "ordinary dollar signs in SQL and expression strings",
            () -> {
              Row r = sql(spark, "SELECT '$5', '${ x }', concat('$', '{x}')").get(0);
              assertEquals(List.of("$5", "${ x }", "${x}"), List.of(r.get(0), r.get(1), r.get(2)));
              assertEquals(
                  "$1{a}",
                  spark.range(1).selectExpr("concat('$1', '{a}')").collectAsList().get(0).get(0));
            }),
        new Work(
            "a USE Spark refuses changes nothing: REFRESH TABLE, DESCRIBE FUNCTION, CACHE TABLE AS pass",
            () -> {
              for (String use : List.of("USE no_such_db", "USE global_temp")) {
                Exception e = assertThrows(Exception.class, () -> sql(spark, use), use);
                assertFalse(String.valueOf(e.getMessage()).contains("SPARKGATE"), e.getMessage());
                sql(spark, "REFRESH TABLE bypass_plain");
                assertFalse(sql(spark, "DESCRIBE FUNCTION abs").isEmpty());
                String view = "bypass_cte_" + use.length();
                sql(spark, "CACHE TABLE " + view + " AS SELECT 1 AS a");
                sql(spark, "UNCACHE TABLE " + view);
                assertEquals("default", spark.catalog().currentDatabase());
              }
            }),
        new Work(
            "df.persist() then df.unpersist() of the session's own DataFrame",
            () -> {
              Dataset<Row> mine = spark.range(100).selectExpr("id * 13 AS x");
              mine.persist();
              assertEquals(100L, mine.count());
              assertTrue(mine.storageLevel().useMemory());
              mine.unpersist();
              assertEquals(StorageLevel.NONE(), mine.storageLevel());
            }),
        new Work(
            "spark.range(10).selectExpr(id * 2)",
            () -> {
              List<Row> rows = spark.range(10).selectExpr("id * 2").collectAsList();
              assertEquals(90L, rows.stream().mapToLong(r -> r.getLong(0)).sum());
            }));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("ordinaryWork")
  void passes(Work work) throws Exception {
    work.action().run();
  }

  private static String shell(String command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertEquals(0, p.waitFor(), out);
    return out;
  }
}
