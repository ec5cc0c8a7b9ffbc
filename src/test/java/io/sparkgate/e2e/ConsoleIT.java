package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.Sparkgate;
import io.sparkgate.audit.AuditVerifier;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The admin console in a real headless browser (Debian's chromium, driven through chromedriver) against a
 * proxy in front of the real Spark 4.0 server: the operator signs in with the admin token, sees the session
 * the real JVM client opened and its running query (with the query's literals redacted), clicks Interrupt,
 * and the client's query fails as interrupted; the audit log has the operator's record, the page never shows
 * the token, and it is served with its Content-Security-Policy. The playground then explains a refusal. The
 * grants section answers who may reach a table and what a principal holds, as the admin API does. The access
 * section shows anonymous fallback loudly, and revokes and restores a principal as the API records it.
 */
@ExtendWith(SparkServerExtension.class)
class ConsoleIT {
  private static final String CLIENT_TOKEN = "console-it-client-" + UUID.randomUUID();
  private static final String ADMIN_TOKEN = "console-it-admin-" + UUID.randomUUID();

  /**
   * Runs for days unless interrupted: a SHA-256 of each of 10^13 rows, counted (a count cannot overflow). One
   * job and no broadcast: a cross join's broadcast was built before its job started, and an interrupt that came
   * in between cancelled nothing while the job then ran on. 424242 is the literal that must stay hidden.
   */
  private static final String LONG_QUERY =
      "SELECT count(*) AS n FROM range(0, 10000000000000, 1, 2)"
          + " WHERE length(sha2(CAST(id AS STRING), 256)) + id <> 424242";

  private static final ObjectMapper JSON = new ObjectMapper();

  private static Path auditFile;
  private static SparkConnectServerProcess server;
  private static Sparkgate proxy;
  private static SparkSession spark;
  private static WebDriver browser;

  @BeforeAll
  static void start(SparkConnectServerProcess shared) throws Exception {
    server = shared;
    Path dir = ProxyConfigs.freshDir("console");
    auditFile = dir.resolve("audit.jsonl");
    Path adminToken = dir.resolve("admin-token");
    Files.writeString(adminToken, ADMIN_TOKEN + "\n");
    String sha =
        HexFormat.of()
            .formatHex(
                MessageDigest.getInstance("SHA-256")
                    .digest(CLIENT_TOKEN.getBytes(StandardCharsets.UTF_8)));
    proxy =
        Sparkgate.start(
            ProxyConfigs.write(
                dir,
                ProxyConfigs.PLAINTEXT_LISTENER,
                ProxyConfigs.backend(server.port()),
                "auth:",
                "  static_tokens:",
                "    - {sha256: " + sha + ", principal: alice, groups: [analysts]}",
                "  anonymous: fallback", // the console's notice of it
                ProxyConfigs.policy("team-data.yaml"), // shared-server.yaml and data grants
                "audit: {file: audit.jsonl, fsync: batch}",
                "admin: {address: 127.0.0.1, port: 0, token_file: '" + adminToken + "'}"));
    // localhost without TLS: the 4.0 JVM client then sends the token as "authorization: Bearer".
    spark = SparkClients.connect("sc://localhost:" + proxy.port() + "/;token=" + CLIENT_TOKEN);

    browser = Browsers.chromium("ConsoleIT loads the admin console in");
  }

  @AfterAll
  static void stop() throws Exception {
    if (browser != null) browser.quit();
    ProxyConfigs.closeAll(spark, proxy);
    if (auditFile != null && Files.exists(auditFile)) {
      AuditVerifier.Result chain = AuditVerifier.verify(List.of(auditFile));
      assertTrue(chain.ok(), chain.message());
    }
  }

  private static String console() {
    return "http://127.0.0.1:" + proxy.adminPort() + "/";
  }

  @Test
  void operatorInterruptsARunningQuery_fromTheConsole() throws Exception {
    WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(60));
    // Rows of operations that ended leave the table between two looks: look again.
    wait.ignoring(org.openqa.selenium.StaleElementReferenceException.class);
    signIn();

    long started = System.nanoTime();
    long logMark = server.logLineCount();
    CompletableFuture<Throwable> query =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                spark.sql(LONG_QUERY).collectAsList();
                return null;
              } catch (Throwable t) {
                return t;
              }
            });

    // Interrupted once its tasks run: an interrupt before the job starts cancels nothing (a race in
    // Spark), and the job then runs on.
    server.awaitLogLine(
        java.util.regex.Pattern.compile("Executor: Running task"), logMark, Duration.ofMinutes(2));

    // The running query appears (the page refreshes every 2 s) with its Interrupt button.
    java.util.function.Function<WebDriver, WebElement> interruptButton =
        d -> {
          if (query.isDone()) {
            throw new AssertionError("the query ended before it was interrupted: " + query.join());
          }
          for (WebElement row : d.findElements(By.cssSelector("#operations tbody tr"))) {
            List<WebElement> buttons = row.findElements(By.cssSelector("button.interrupt"));
            // The SQL shows while the ExecutePlan stream runs; the shared test server ends each
            // stream after a second, and a reattach carries no plan: then the row is alice's.
            String text = row.getText();
            if (!buttons.isEmpty() && (text.contains("range(") || text.contains("alice"))) {
              return buttons.get(0);
            }
          }
          return null;
        };
    WebElement interrupt = wait.until(interruptButton::apply);
    String operationId = interrupt.getAttribute("data-operation");
    WebElement opRow = interrupt.findElement(By.xpath("./ancestor::tr"));
    assertTrue(opRow.getText().contains("alice"), opRow.getText());
    JsonNode op = apiOperation(operationId);
    String sessionId = op.get("session_id").asText();
    // The session the client opened is listed, with its running operation.
    wait.until(
        d ->
            d.findElements(By.cssSelector("#sessions tbody tr")).stream()
                .anyMatch(r -> r.getText().contains(sessionId) && r.getText().contains("alice")));
    Files.copy(
        ((org.openqa.selenium.TakesScreenshot) browser)
            .getScreenshotAs(org.openqa.selenium.OutputType.FILE)
            .toPath(),
        auditFile.resolveSibling("console.png"));
    String page = browser.getPageSource();
    assertFalse(page.contains("424242"), "a SQL literal reached the page");
    assertFalse(page.contains(ADMIN_TOKEN), "the admin token is in the page");
    assertFalse(page.contains(CLIENT_TOKEN), "a client token is in the page");
    assertFalse(query.isDone(), "the query should still be running: " + query.getNow(null));

    // Found again: the page has refreshed since (each reattach replaces the row).
    wait.until(
        d -> {
          WebElement button = interruptButton.apply(d);
          if (button == null) return false;
          button.click(); // a stale one (the table redrawn meanwhile) is looked up again
          return true;
        });
    Throwable failure = query.get(120, TimeUnit.SECONDS);
    long ranSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
    System.out.println("client shows after " + ranSeconds + " s: " + failure);
    assertTrue(failure != null, "the query finished instead of being interrupted");
    String shown = String.valueOf(failure.getMessage()).toLowerCase(Locale.ROOT);
    assertTrue(shown.contains("cancel") || shown.contains("interrupt"), failure.toString());
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("action"), "interrupted"));

    // The operator's action is in the audit log.
    JsonNode record =
        Await.value(
            "the operator's audit record",
            () ->
                AuditLines.complete(auditFile).stream()
                    .map(ConsoleIT::parse)
                    .filter(r -> "interrupt".equals(r.path("action").asText()))
                    .findFirst()
                    .orElse(null),
            r -> r != null);
    assertEquals("token", record.get("operator").asText());
    assertEquals("operation:" + operationId, record.get("target").asText());
    assertEquals("interrupted", record.get("outcome").asText());
    assertEquals("alice", record.get("principal").asText());
    assertEquals(sessionId, record.get("session_id").asText());

    // The page is served with its Content-Security-Policy, as the browser sees it.
    Object csp =
        ((JavascriptExecutor) browser)
            .executeAsyncScript(
                "const done = arguments[arguments.length - 1];"
                    + "fetch('/', {cache: 'no-store'})"
                    + ".then(r => done(r.headers.get('content-security-policy')))"
                    + ".catch(e => done('failed: ' + e));");
    assertTrue(String.valueOf(csp).startsWith("default-src 'self'"), String.valueOf(csp));
    assertFalse(browser.getPageSource().contains(ADMIN_TOKEN));

    // The playground explains a statement as `policy explain` does, with the pool's policy in
    // force.
    WebElement sql = browser.findElement(By.id("pg-sql"));
    sql.clear();
    sql.sendKeys("SELECT reflect('java.lang.System', 'getenv')");
    browser.findElement(By.id("pg-run")).click();
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(By.id("pg-decision"), "no-reflection"));
    String facts = browser.findElement(By.id("pg-facts")).getText();
    assertTrue(facts.contains("decision: deny by rule 'no-reflection'"), facts);

    // The session is still usable after its operation was interrupted.
    assertEquals(10L, spark.range(10).count());
  }

  /**
   * The grants section in the browser, over the proxy's policy (policies/team-data.yaml): the operator asks
   * who may reach a table and a path, and what a principal holds, and the rows the page draws (grant,
   * holders, privileges, patterns) are those the admin API answers, the patterns filled in for the principal;
   * a table no grant covers reads as default deny, and a question without a principal shows the API's error.
   */
  @Test
  void operatorReviewsGrants_fromTheConsole() throws Exception {
    WebDriverWait wait = signIn();
    // The pools' list arrives with the policy, a little after the first refresh.
    wait.until(
        d ->
            d.findElements(By.cssSelector("#gr-pool option")).stream()
                .anyMatch(o -> "default".equals(o.getAttribute("value"))));

    String table = "spark_catalog.shared.calendar";
    String path = "s3a://finance-data/2026/q1.parquet";
    type("gr-table", table);
    type("gr-path", path);
    browser.findElement(By.id("gr-who")).click();
    List<WebElement> whoTables =
        wait.until(
            d -> {
              List<WebElement> t = d.findElements(By.cssSelector("#gr-who-out table"));
              return t.size() == 2 ? t : null;
            });
    JsonNode who = admin("api/grants/who?pool=default&table=" + table + "&path=" + encode(path));
    List<String> headings =
        browser.findElements(By.cssSelector("#gr-who-out h3")).stream()
            .map(WebElement::getText)
            .toList();
    assertEquals(List.of(table, path), headings);
    assertEquals(header("Grant", "To", "Privileges", "By pattern"), headerOf(whoTables.get(0)));
    assertEquals(coverageRows(who.get("grants")), rowsOf(whoTables.get(0)));
    assertEquals(coverageRows(who.get("path_grants")), rowsOf(whoTables.get(1)));
    // What team-data.yaml grants, as the page shows it (so that an empty answer cannot match).
    assertEquals(
        List.of(
            List.of(
                "analysts-read-shared",
                "groups [analysts, finance, marketing]",
                "select",
                "spark_catalog.shared.*"),
            List.of(
                "platform-writes-shared",
                "groups [platform]",
                "select, modify, create, alter, drop, maintain",
                "spark_catalog.shared.*")),
        rowsOf(whoTables.get(0)));
    assertEquals(
        List.of(
            List.of(
                "finance-bucket", "groups [finance]", "select, modify", "s3a://finance-data/*")),
        rowsOf(whoTables.get(1)));

    // A scratch table: the {principal} pattern covers it for its one principal.
    type("gr-table", "spark_catalog.scratch_alice.work");
    type("gr-path", "");
    browser.findElement(By.id("gr-who")).click();
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(
            By.id("gr-who-out"), "spark_catalog.scratch_alice.work"));
    JsonNode scratch = admin("api/grants/who?pool=default&table=spark_catalog.scratch_alice.work");
    List<List<String>> scratchRows =
        rowsOf(browser.findElement(By.cssSelector("#gr-who-out table")));
    assertEquals(coverageRows(scratch.get("grants")), scratchRows);
    assertEquals(
        List.of(
            List.of(
                "own-scratch",
                "principals [*] (for principal alice only)",
                "select, modify, create, alter, drop, maintain",
                "spark_catalog.scratch_{principal}.*")),
        scratchRows);

    // A table no grant covers.
    type("gr-table", "spark_catalog.default.nobodys");
    browser.findElement(By.id("gr-who")).click();
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(
            By.id("gr-who-out"), "No grant covers it: default deny, no one may reach it."));
    assertTrue(browser.findElements(By.cssSelector("#gr-who-out table")).isEmpty());

    // What alice holds with groups finance and analysts.
    type("gr-principal", "alice");
    type("gr-groups", "finance, analysts");
    browser.findElement(By.id("gr-what")).click();
    WebElement whatTable =
        wait.until(
            ExpectedConditions.visibilityOfElementLocated(By.cssSelector("#gr-what-out table")));
    JsonNode what = admin("api/grants/what?pool=default&principal=alice&groups=finance,analysts");
    assertEquals(header("Grant", "Privileges", "Tables and paths"), headerOf(whatTable));
    List<List<String>> expected = new ArrayList<>();
    for (JsonNode g : what.get("grants")) {
      List<String> targets = new ArrayList<>();
      g.get("tables").forEach(t -> targets.add(t.asText()));
      g.get("paths").forEach(p -> targets.add(p.asText()));
      expected.add(
          List.of(
              g.get("grant").asText(), joined(g.get("privileges")), String.join(", ", targets)));
    }
    List<List<String>> whatRows = rowsOf(whatTable);
    assertEquals(expected, whatRows);
    assertEquals(
        List.of("finance-team", "analysts-read-shared", "own-scratch", "finance-bucket"),
        whatRows.stream().map(r -> r.get(0)).toList());
    assertTrue(
        whatRows.contains(
            List.of(
                "own-scratch",
                "select, modify, create, alter, drop, maintain",
                "spark_catalog.scratch_alice.*")),
        whatRows.toString());

    // Without a principal: the API's 400, shown as the page's error.
    type("gr-principal", "");
    browser.findElement(By.id("gr-what")).click();
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(
            By.cssSelector("#gr-what-out .error"), "give principal=<name>"));
    assertFalse(browser.getPageSource().contains(ADMIN_TOKEN));
  }

  /**
   * The access section: the proxy's {@code anonymous: fallback} is shown as a notice; the operator revokes a
   * principal whose name holds slashes (a SPIFFE ID, sent percent-encoded) through the form, sees it listed as
   * the API lists it, restores it with its row's button and sees it gone, from the page and from the API; both
   * changes are in the audit log with the operator. Not alice: her session serves the other tests.
   */
  @Test
  void operatorRevokesAndRestoresAPrincipal_fromTheConsole() throws Exception {
    WebDriverWait wait = signIn();
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(
            By.id("anonymous-notice"),
            "callers without credentials are served as user 'anonymous'"));
    assertTrue(browser.findElement(By.id("anonymous-notice")).isDisplayed());
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(
            By.cssSelector("#revocations tbody"), "none"));

    String name = "spiffe://example.org/ns/ci/sa/builder";
    type("rv-name", name);
    type("rv-reason", "credentials leaked in a CI log");
    type("rv-until", "2099-12-31T18:00:00Z");
    browser.findElement(By.id("rv-revoke")).click();
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(
            By.id("action"), "revoked principal " + name));
    WebElement row =
        wait.until(
            ExpectedConditions.presenceOfElementLocated(
                By.cssSelector("#revocations tbody tr[data-key='principal|" + name + "']")));
    List<String> cells =
        row.findElements(By.tagName("td")).stream().map(WebElement::getText).toList();
    assertEquals(List.of("principal", name, "credentials leaked in a CI log"), cells.subList(0, 3));
    assertEquals("token", cells.get(4), "the operator signed in with the admin token");
    ((JavascriptExecutor) browser)
        .executeScript("document.getElementById('access').scrollIntoView();");
    Files.copy(
        ((org.openqa.selenium.TakesScreenshot) browser)
            .getScreenshotAs(org.openqa.selenium.OutputType.FILE)
            .toPath(),
        auditFile.resolveSibling("console-access.png"));

    JsonNode listed = admin("api/revocations");
    assertEquals("fallback", listed.get("anonymous").asText());
    assertEquals(1, listed.get("revoked").size(), listed.toString());
    JsonNode r = listed.get("revoked").get(0);
    assertEquals("principal", r.get("kind").asText());
    assertEquals(name, r.get("name").asText());
    assertEquals("credentials leaked in a CI log", r.get("reason").asText());
    assertEquals("2099-12-31T18:00:00Z", r.get("until").asText());
    assertEquals("token", r.get("operator").asText());

    row.findElement(By.cssSelector("button.restore")).click();
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(
            By.id("action"), "restored principal " + name));
    wait.until(
        d ->
            d.findElements(By.cssSelector("#revocations tbody tr[data-key]")).isEmpty()
                && d.findElement(By.cssSelector("#revocations tbody")).getText().equals("none"));
    assertEquals(0, admin("api/revocations").get("revoked").size());

    List<JsonNode> records =
        Await.value(
            "the revoke and restore audit records",
            () ->
                AuditLines.complete(auditFile).stream()
                    .map(ConsoleIT::parse)
                    .filter(a -> List.of("revoke", "restore").contains(a.path("action").asText()))
                    .toList(),
            l -> l.size() == 2);
    assertEquals(
        List.of("revoke", "restore"), records.stream().map(a -> a.get("action").asText()).toList());
    for (JsonNode a : records) {
      assertEquals("token", a.get("operator").asText());
      assertEquals("principal:" + name, a.get("target").asText());
    }
    assertFalse(browser.getPageSource().contains(ADMIN_TOKEN));
  }

  /**
   * Opens the console and signs in. The listener needs the admin token and the page asks for it once per tab:
   * what an earlier test stored in this tab is forgotten first.
   */
  private static WebDriverWait signIn() {
    WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(60));
    browser.get(console());
    ((JavascriptExecutor) browser).executeScript("sessionStorage.clear();");
    browser.navigate().refresh();
    WebElement token = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token")));
    token.sendKeys(ADMIN_TOKEN);
    browser.findElement(By.id("token-save")).click();
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("operations")));
    return wait;
  }

  private static void type(String id, String text) {
    WebElement input = browser.findElement(By.id(id));
    input.clear();
    input.sendKeys(text);
  }

  private static List<String> header(String... cells) {
    return List.of(cells);
  }

  private static List<String> headerOf(WebElement table) {
    return table.findElements(By.cssSelector("thead th")).stream()
        .map(WebElement::getText)
        .toList();
  }

  private static List<List<String>> rowsOf(WebElement table) {
    return table.findElements(By.cssSelector("tbody tr")).stream()
        .map(tr -> tr.findElements(By.tagName("td")).stream().map(WebElement::getText).toList())
        .toList();
  }

  /** The rows the page should draw for a who answer's grants: grant, to, privileges, pattern. */
  private static List<List<String>> coverageRows(JsonNode grants) {
    List<List<String>> rows = new ArrayList<>();
    for (JsonNode g : grants) {
      String to = g.get("to").asText();
      if (!g.get("principal").isNull()) {
        to += " (for principal " + g.get("principal").asText() + " only)";
      }
      rows.add(
          List.of(
              g.get("grant").asText(), to, joined(g.get("privileges")), g.get("pattern").asText()));
    }
    return rows;
  }

  private static String joined(JsonNode labels) {
    List<String> out = new ArrayList<>();
    labels.forEach(l -> out.add(l.asText()));
    return String.join(", ", out);
  }

  private static String encode(String text) {
    return java.net.URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  /** A GET of the admin API with the admin token; it must answer 200. */
  private static JsonNode admin(String pathAndQuery) throws Exception {
    java.net.http.HttpResponse<String> r =
        HTTP.send(
            java.net.http.HttpRequest.newBuilder(java.net.URI.create(console() + pathAndQuery))
                .header("Authorization", "Bearer " + ADMIN_TOKEN)
                .build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  /**
   * One client for the test's own API calls: it keeps its connection. A client per poll left one connection
   * open per poll until collected, and past the admin listener's 64 connections a poll was closed unanswered.
   */
  private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

  /**
   * The operation as the API shows it, asked with the admin token. Asked again for a while when it is not
   * listed: the shared test server ends each stream after a second, and until the client reattaches no call
   * of the operation is live.
   */
  private static JsonNode apiOperation(String operationId) throws Exception {
    return io.sparkgate.testing.Await.value(
        "operation " + operationId + " listed by the API",
        Duration.ofSeconds(15),
        () -> {
          java.net.http.HttpResponse<String> r =
              HTTP.send(
                  java.net.http.HttpRequest.newBuilder(
                          java.net.URI.create(console() + "api/operations"))
                      .header("Authorization", "Bearer " + ADMIN_TOKEN)
                      .build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString());
          assertEquals(200, r.statusCode(), r.body());
          assertFalse(r.body().contains("424242"), r.body());
          for (JsonNode op : JSON.readTree(r.body()).get("operations")) {
            if (op.get("operation_id").asText().equals(operationId)) return op;
          }
          return null;
        },
        op -> op != null);
  }

  private static JsonNode parse(String line) {
    try {
      return JSON.readTree(line);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
