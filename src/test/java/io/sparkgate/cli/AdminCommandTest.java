package io.sparkgate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.admin.AdminApi;
import io.sparkgate.admin.AdminServer;
import io.sparkgate.config.AdminConfig;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.Secret;
import io.sparkgate.config.TlsConfig;
import io.sparkgate.live.LiveCalls;
import io.sparkgate.revoke.Revocations;
import io.sparkgate.testing.FakeTime;
import io.sparkgate.testing.TestConfigs;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code sparkgate admin revoke|restore|revocations} against a real admin listener serving the real admin API:
 * what reaches the proxy's revocations and audit, the one line printed, and exit 0, 1 (the proxy refused) or 2
 * (bad arguments, nothing sent).
 */
final class AdminCommandTest {
  private static final String TOKEN = "admin-command-test-token";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private final FakeTime time = new FakeTime();
  private final List<Map<String, Object>> audit = new ArrayList<>();
  private Revocations revocations;
  private AdminServer server;
  private StringWriter out = new StringWriter();
  private StringWriter err = new StringWriter();

  @BeforeEach
  void start() throws Exception {
    revocations =
        Revocations.start(
            new AuthConfig.Revocations(Optional.empty(), Optional.empty()), null, time);
  }

  private String url(AdminConfig config) throws Exception {
    AdminApi api =
        new AdminApi(
            new AdminApi.Views(
                new LiveCalls(time, Duration.ofMinutes(30)),
                Map::of,
                List::of,
                null,
                null,
                null,
                (user, session) -> {},
                audit::add,
                time,
                revocations,
                "fallback"));
    server = AdminServer.start(config, api.register(new AdminServer.Routes()));
    String scheme = config.tls().isPresent() ? "https://localhost:" : "http://127.0.0.1:";
    return scheme + server.port();
  }

  @AfterEach
  void stop() {
    if (server != null) server.close();
    revocations.close();
  }

  private int run(String... args) {
    out = new StringWriter();
    err = new StringWriter();
    CommandLine cli = Main.commandLine();
    cli.setOut(new PrintWriter(out)).setErr(new PrintWriter(err));
    return cli.execute(args);
  }

  @Test
  void revoke_list_restore_andRestoreAgainIs404() throws Exception {
    String url = url(TestConfigs.adminLoopback(0));
    assertEquals(
        0,
        run("admin", "revoke", "--url", url, "--principal", "alice", "--reason", "laptop stolen"),
        err.toString());
    assertEquals("revoked principal alice (kept in memory)\n", out.toString());
    assertTrue(revocations.principal("alice").isPresent());
    assertEquals("revoke", audit.get(0).get("action"));
    assertEquals("laptop stolen", audit.get(0).get("reason"));

    assertEquals(
        0,
        run(
            "admin",
            "revoke",
            "--url",
            url + "/",
            "--jti",
            "jti-7",
            "--reason",
            "leaked",
            "--until",
            "2026-12-31T18:00:00Z"));
    assertEquals(
        "revoked token jti-7 until 2026-12-31T18:00:00Z (kept in memory)\n", out.toString());

    assertEquals(0, run("admin", "revocations", "--url", url), err.toString());
    String at = revocations.principal("alice").get().at().toString();
    assertEquals(
        String.join(
            "\n",
            "anonymous: fallback (callers without credentials are served as user 'anonymous')",
            "kept in: memory",
            "KIND       NAME   REASON         UNTIL                 OPERATOR  AT",
            "principal  alice  laptop stolen  -                     loopback  " + at,
            "token      jti-7  leaked         2026-12-31T18:00:00Z  loopback  " + at,
            ""),
        out.toString());
    assertEquals(0, run("admin", "revocations", "--url", url, "--json"));
    JsonNode raw = JSON.readTree(out.toString());
    assertEquals(2, raw.get("revoked").size());
    assertEquals("fallback", raw.get("anonymous").asText());

    assertEquals(0, run("admin", "restore", "--url", url, "--principal", "alice"), err.toString());
    assertEquals("restored principal alice\n", out.toString());
    assertTrue(revocations.principal("alice").isEmpty());
    assertEquals("restore", audit.get(audit.size() - 1).get("action"));

    assertEquals(1, run("admin", "restore", "--url", url, "--principal", "alice"));
    assertEquals("", out.toString());
    assertEquals(
        "sparkgate admin restore: principal 'alice' is not revoked (HTTP 404)\n", err.toString());
  }

  @Test
  void aNameWithSlashes_reachesTheProxyWhole() throws Exception {
    String url = url(TestConfigs.adminLoopback(0));
    String spiffe = "spiffe://example.org/ns/a b+c/%2F";
    assertEquals(
        0,
        run("admin", "revoke", "--url", url, "--principal", spiffe, "--reason", "x"),
        err.toString());
    assertTrue(revocations.principal(spiffe).isPresent());
    assertEquals(
        "spiffe%3A%2F%2Fexample.org%2Fns%2Fa%20b%2Bc%2F%252F", AdminClient.segment(spiffe));
    assertEquals(0, run("admin", "restore", "--url", url, "--principal", spiffe));
    assertTrue(revocations.active().isEmpty());
  }

  @Test
  void badInput_isExit2_andNothingIsSent() throws Exception {
    String url = url(TestConfigs.adminLoopback(0));
    assertEquals(
        2,
        run(
            "admin",
            "revoke",
            "--url",
            url,
            "--principal",
            "alice",
            "--reason",
            "x",
            "--until",
            "tomorrow"));
    assertEquals(
        "sparkgate admin revoke: --until must be an RFC 3339 time with its offset,"
            + " e.g. 2026-12-31T18:00:00Z, got 'tomorrow'\n",
        err.toString());
    assertEquals(
        2, run("admin", "revoke", "--url", url, "--principal", "a", "--jti", "b", "--reason", "x"));
    assertTrue(err.toString().contains("mutually exclusive"), err.toString());
    assertEquals(2, run("admin", "restore", "--url", url));
    assertEquals(2, run("admin", "revoke", "--url", url, "--principal", "alice"));
    assertEquals(2, run("admin", "revoke", "--url", url, "--principal", "", "--reason", "x"));
    assertTrue(revocations.active().isEmpty());
    assertTrue(audit.isEmpty());

    // The proxy judges what it alone can: a time already past.
    assertEquals(
        1,
        run(
            "admin",
            "revoke",
            "--url",
            url,
            "--principal",
            "alice",
            "--reason",
            "x",
            "--until",
            "2001-01-01T00:00:00Z"));
    assertTrue(err.toString().contains("until is in the past"), err.toString());
  }

  @Test
  void plainHttpBeyondLoopback_isRefused_beforeAnythingIsSent() throws Exception {
    Path token = dir.resolve("token");
    Files.writeString(token, TOKEN + "\n");
    for (String url :
        List.of("http://proxy.example.com:9464", "http://10.0.0.7:9464", "http://[fe80::1]:9464")) {
      assertEquals(
          2, run("admin", "revocations", "--url", url, "--token-file", token.toString()), url);
      assertEquals(
          "sparkgate admin revocations: --url "
              + url
              + " is plain http beyond loopback: the admin token would cross the network in the"
              + " clear; use https:// (admin.tls on the proxy)\n",
          err.toString());
    }
    assertEquals(2, run("admin", "revocations", "--url", "ftp://localhost:9464"));
    assertTrue(AdminClient.loopback("localhost"));
    assertTrue(AdminClient.loopback("127.0.0.2"));
    assertTrue(AdminClient.loopback("[::1]"));
    assertFalse(AdminClient.loopback("localhost.example.com"));
  }

  @Test
  void tokenFile_isSentAsBearer_andNeverPrinted() throws Exception {
    String url =
        url(
            new AdminConfig(
                true,
                "127.0.0.1",
                0,
                "/metrics",
                Optional.of(new Secret(TOKEN)),
                Optional.empty()));
    assertEquals(1, run("admin", "revocations", "--url", url));
    assertEquals(
        "sparkgate admin revocations: the admin listener wants credentials (HTTP 401): give"
            + " --token-file with the proxy's admin token, or --cert-file and --key-file for a"
            + " client certificate\n",
        err.toString());

    Path wrong = dir.resolve("wrong");
    Files.writeString(wrong, "not-the-token\n");
    assertEquals(1, run("admin", "revocations", "--url", url, "--token-file", wrong.toString()));
    assertTrue(err.toString().contains("did not accept the token (HTTP 401)"), err.toString());
    assertFalse(err.toString().contains("not-the-token"));

    Path token = dir.resolve("token");
    Files.writeString(token, TOKEN + "\n");
    assertEquals(
        0,
        run(
            "admin",
            "revoke",
            "--url",
            url,
            "--token-file",
            token.toString(),
            "--principal",
            "bob",
            "--reason",
            "left"),
        err.toString());
    assertEquals("token", revocations.principal("bob").get().operator());
    assertFalse(out.toString().contains(TOKEN));
    assertEquals(
        2, run("admin", "revocations", "--url", url, "--token-file", dir.resolve("no").toString()));
    assertEquals(
        "sparkgate admin revocations: --token-file " + dir.resolve("no") + ": no such file\n",
        err.toString());
  }

  @Test
  void tls_trustsTheGivenCa_andPresentsTheClientCertificate() throws Exception {
    io.sparkgate.tls.DevCertificates.Generated certs =
        io.sparkgate.tls.DevCertificates.generate(
            dir.resolve("certs"), io.sparkgate.tls.DevCertificates.Options.defaults());
    TlsConfig tls =
        new TlsConfig(
            certs.serverCert(),
            certs.serverKey(),
            Optional.of(certs.caCert()),
            Duration.ofMinutes(1));
    String url =
        url(new AdminConfig(true, "127.0.0.1", 0, "/metrics", Optional.empty(), Optional.of(tls)));

    assertEquals(
        0,
        run(
            "admin",
            "revoke",
            "--url",
            url,
            "--ca-file",
            certs.caCert().toString(),
            "--cert-file",
            certs.clientCert().toString(),
            "--key-file",
            certs.clientKey().toString(),
            "--principal",
            "carol",
            "--reason",
            "x"),
        err.toString());
    assertTrue(
        revocations.principal("carol").get().operator().contains("CN=dev-user"),
        revocations.principal("carol").get().operator());

    // Without the CA, the JVM's default trust does not know the listener's certificate.
    assertEquals(1, run("admin", "revocations", "--url", url));
    assertTrue(err.toString().contains("TLS with " + url + " failed"), err.toString());
    // Without a client certificate (and no token), the listener asks for credentials.
    assertEquals(
        1, run("admin", "revocations", "--url", url, "--ca-file", certs.caCert().toString()));
    assertTrue(err.toString().contains("(HTTP 401)"), err.toString());
    assertEquals(
        2, run("admin", "revocations", "--url", url, "--cert-file", certs.clientCert().toString()));
    assertEquals(
        "sparkgate admin revocations: give --cert-file and --key-file together, or neither\n",
        err.toString());
    assertEquals(
        2, run("admin", "revocations", "--url", url, "--ca-file", certs.clientKey().toString()));
    assertEquals(
        "sparkgate admin revocations: "
            + certs.clientKey()
            + ": no PEM 'CERTIFICATE' block found\n",
        err.toString());
  }
}
