package io.sparkgate.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.config.AdminConfig;
import io.sparkgate.config.Secret;
import io.sparkgate.config.TlsConfig;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.TestConfigs;
import io.sparkgate.tls.DevCertificates;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The admin listener on a real port: open paths for probes, credentials for the rest (bearer token or client
 * certificate), POSTs only as JSON, and a listener that stalled or greedy clients cannot take away.
 */
final class AdminServerTest {
  private static final String TOKEN = "admin-token-0123456789";

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();
  private AdminServer server;

  @AfterEach
  void stop() {
    if (server != null) server.close();
  }

  private static AdminServer.Routes routes() {
    return new AdminServer.Routes()
        .open("/healthz", AdminHandler.getOnly(r -> AdminResponse.text(200, "ok\n")))
        .exact("/metrics", AdminHandler.getOnly(r -> AdminResponse.text(200, "scrape\n")))
        .prefix(
            "/api/",
            r -> AdminResponse.json(200, java.util.Map.of("path", r.path(), "by", r.operator())));
  }

  private AdminServer start(AdminConfig config) throws IOException {
    server = AdminServer.start(config, routes());
    return server;
  }

  private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path));
  }

  @Test
  void loopbackWithoutCredentials_servesEveryone_asLoopback() throws Exception {
    start(TestConfigs.adminLoopback(0));
    assertEquals("ok\n", send(request("/healthz")).body());
    HttpResponse<String> api = send(request("/api/sessions"));
    assertEquals(200, api.statusCode());
    assertTrue(api.body().contains("\"by\" : \"loopback\""), api.body());
    assertEquals("no-store", api.headers().firstValue("cache-control").orElseThrow());
    assertEquals(404, send(request("/nope")).statusCode());
    assertEquals(404, send(request("/metrics/x")).statusCode());
  }

  @Test
  void boundBeyondLoopbackWithAToken_onlyProbesAnswerWithoutIt() throws Exception {
    start(
        new AdminConfig(
            true, "0.0.0.0", 0, "/metrics", Optional.of(new Secret(TOKEN)), Optional.empty()));
    assertEquals(200, send(request("/healthz")).statusCode(), "probes need nothing");
    for (String path : List.of("/metrics", "/api/sessions", "/api/")) {
      HttpResponse<String> none = send(request(path));
      assertEquals(401, none.statusCode(), path);
      assertEquals(
          "Bearer realm=\"sparkgate\"",
          none.headers().firstValue("www-authenticate").orElseThrow());
      assertFalse(none.body().contains(TOKEN));
      assertEquals(
          401,
          send(request(path).header("Authorization", "Bearer " + TOKEN + "x")).statusCode(),
          "a wrong token");
      assertEquals(
          401, send(request(path).header("Authorization", TOKEN)).statusCode(), "not a bearer");
      assertEquals(
          200, send(request(path).header("Authorization", "Bearer " + TOKEN)).statusCode(), path);
    }
    assertTrue(
        send(request("/api/x").header("Authorization", "bearer " + TOKEN))
            .body()
            .contains("\"by\" : \"token\""));
  }

  @Test
  void methods_getAndHead_postOnlyAsJson() throws Exception {
    start(TestConfigs.adminLoopback(0));
    HttpResponse<String> post =
        send(
            request("/metrics")
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .header("Content-Type", "application/json"));
    assertEquals(405, post.statusCode());
    assertEquals("GET, HEAD", post.headers().firstValue("allow").orElseThrow());
    HttpResponse<String> head =
        send(request("/metrics").method("HEAD", HttpRequest.BodyPublishers.noBody()));
    assertEquals(200, head.statusCode());
    assertEquals("", head.body());
    // A form post is what a hostile page can send cross-origin without a preflight: refused.
    HttpResponse<String> form =
        send(
            request("/api/act")
                .POST(HttpRequest.BodyPublishers.ofString("a=b"))
                .header("Content-Type", "application/x-www-form-urlencoded"));
    assertEquals(415, form.statusCode());
    HttpResponse<String> json =
        send(
            request("/api/act")
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .header("Content-Type", "application/json"));
    assertEquals(200, json.statusCode());
  }

  @Test
  void clientCertificates_authenticateTheOperator_probesNeedNone() throws Exception {
    DevCertificates.Generated certs =
        DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    TlsConfig tls =
        new TlsConfig(
            certs.serverCert(),
            certs.serverKey(),
            Optional.of(certs.caCert()),
            Duration.ofMinutes(1));
    start(new AdminConfig(true, "127.0.0.1", 0, "/metrics", Optional.empty(), Optional.of(tls)));
    URI api = URI.create("https://localhost:" + server.port() + "/api/whoami");

    HttpClient withCert = HttpClient.newBuilder().sslContext(tls(certs, true)).build();
    HttpResponse<String> ok =
        withCert.send(HttpRequest.newBuilder(api).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, ok.statusCode());
    assertTrue(
        ok.body().contains("CN="), "the certificate's subject is the operator: " + ok.body());

    HttpClient without = HttpClient.newBuilder().sslContext(tls(certs, false)).build();
    assertEquals(
        401,
        without
            .send(HttpRequest.newBuilder(api).build(), HttpResponse.BodyHandlers.ofString())
            .statusCode(),
        "no certificate, no token: refused");
    URI healthz = URI.create("https://localhost:" + server.port() + "/healthz");
    assertEquals(
        200,
        without
            .send(HttpRequest.newBuilder(healthz).build(), HttpResponse.BodyHandlers.ofString())
            .statusCode(),
        "a probe needs no certificate");
  }

  private static SSLContext tls(DevCertificates.Generated certs, boolean withClientCert)
      throws Exception {
    char[] password = "changeit".toCharArray();
    KeyStore trust = KeyStore.getInstance("PKCS12");
    try (var in = Files.newInputStream(certs.trustStore())) {
      trust.load(in, password);
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (withClientCert) {
      KeyStore client = KeyStore.getInstance("PKCS12");
      try (var in = Files.newInputStream(certs.clientKeyStore())) {
        client.load(in, password);
      }
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(client, password);
    }
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return context;
  }

  /** A client that opens connections and never finishes its request must not keep the scraper out. */
  @Test
  void stalledClients_doNotBlockScrapes() throws Exception {
    start(TestConfigs.adminLoopback(0));
    List<Socket> stalled = new ArrayList<>();
    try {
      for (int i = 0; i < 20; i++) {
        Socket s = new Socket("127.0.0.1", server.port());
        s.getOutputStream().write("GET /metr".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        stalled.add(s);
      }
      HttpResponse<String> ok =
          http.sendAsync(request("/metrics").GET().build(), HttpResponse.BodyHandlers.ofString())
              .get(30, TimeUnit.SECONDS);
      assertEquals(200, ok.statusCode());
    } finally {
      for (Socket s : stalled) {
        s.close();
      }
    }
  }

  /** Connections beyond the cap are closed at once; the scraper gets in again as soon as some go. */
  @Test
  void connectionsBeyondTheCap_closed() throws Exception {
    start(TestConfigs.adminLoopback(0));
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < AdminServer.MAX_CONNECTIONS; i++) {
        held.add(new Socket("127.0.0.1", server.port()));
      }
      // No wait for the listener to accept them: its one event loop takes connections in the order
      // the kernel completed them, so the extra one is counted after all of these.
      try (Socket extra = new Socket("127.0.0.1", server.port())) {
        extra.setSoTimeout(5000);
        assertEquals(-1, extra.getInputStream().read(), "one more is closed without an answer");
      }
      for (Socket s : held) {
        s.close();
      }
      Await.value(
          "the listener to serve again once the held connections went",
          () -> {
            try {
              return send(request("/metrics")).statusCode();
            } catch (IOException closedWhileFull) {
              return 0;
            }
          },
          status -> status == 200);
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }
}
