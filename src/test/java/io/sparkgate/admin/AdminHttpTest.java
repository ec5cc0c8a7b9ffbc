package io.sparkgate.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.config.AdminConfig;
import io.sparkgate.config.Secret;
import io.sparkgate.testing.TestConfigs;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The admin listener's HTTP/1.1 on the wire, written by hand: connections kept and closed as asked, answers
 * in the order of their requests, HEAD without a body, other methods refused, and requests that are
 * malformed, too large or too slow cut off without reaching a handler.
 */
final class AdminHttpTest {
  private static final String TOKEN = "admin-token-0123456789";

  private AdminServer server;
  private final CountDownLatch secondStarted = new CountDownLatch(1);
  private final AtomicBoolean overlapped = new AtomicBoolean();

  @AfterEach
  void stop() {
    if (server != null) server.close();
  }

  private AdminServer.Routes routes() {
    return new AdminServer.Routes()
        .open("/healthz", AdminHandler.getOnly(r -> AdminResponse.text(200, "ok\n")))
        .exact("/metrics", AdminHandler.getOnly(r -> AdminResponse.text(200, "scrape\n")))
        // Waits a little for the next request's handler: on a connection answered one request at a
        // time, it never starts.
        .exact(
            "/first",
            r -> {
              overlapped.set(secondStarted.await(500, TimeUnit.MILLISECONDS));
              return AdminResponse.text(200, "first\n");
            })
        .exact(
            "/second",
            r -> {
              secondStarted.countDown();
              return AdminResponse.text(200, "second\n");
            })
        .exact(
            "/busy",
            r -> {
              Thread.sleep(r.param("ms").map(Long::parseLong).orElse(0L));
              return AdminResponse.text(200, "done\n");
            })
        .prefix(
            "/api/",
            r ->
                AdminResponse.json(
                    200, Map.of("path", r.path(), "bytes", r.body().length, "by", r.operator())));
  }

  private RawHttp connect(AdminConfig config, Duration requestTimeout) throws Exception {
    if (server == null) server = AdminServer.start(config, routes(), requestTimeout);
    return new RawHttp(server.port());
  }

  private RawHttp connect(AdminConfig config) throws Exception {
    return connect(config, AdminServer.REQUEST_TIMEOUT);
  }

  private RawHttp connect() throws Exception {
    return connect(TestConfigs.adminLoopback(0));
  }

  private static String get(String path) {
    return "GET " + path + " HTTP/1.1\r\nHost: admin\r\n\r\n";
  }

  @Test
  void keepAlive_oneConnectionServesRequestAfterRequest_untilTheClientSaysClose() throws Exception {
    try (RawHttp c = connect()) {
      for (int i = 0; i < 3; i++) {
        RawHttp.Response r = c.send(get("/healthz")).read();
        assertEquals(200, r.status());
        assertEquals("ok\n", r.body());
      }
      RawHttp.Response last =
          c.send("GET /metrics HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n\r\n").read();
      assertEquals("scrape\n", last.body());
      assertEquals("close", last.header("connection"));
      assertTrue(c.closedByServer(), "closed after the answer, as asked");
    }
  }

  @Test
  void http10_closedAfterOneAnswer() throws Exception {
    try (RawHttp c = connect()) {
      assertEquals(200, c.send("GET /healthz HTTP/1.0\r\n\r\n").read().status());
      assertTrue(c.closedByServer());
    }
  }

  @Test
  void pipelinedRequests_answeredOneAtATime_inTheirOrder() throws Exception {
    try (RawHttp c = connect()) {
      c.send(get("/first") + get("/second") + get("/metrics"));
      assertEquals("first\n", c.read().body());
      assertEquals("second\n", c.read().body());
      assertEquals("scrape\n", c.read().body());
      assertFalse(
          overlapped.get(), "the second request's handler started before the first answered");
    }
  }

  @Test
  void head_hasTheHeadersOfGet_andNoBody() throws Exception {
    try (RawHttp c = connect()) {
      RawHttp.Response head = c.send("HEAD /metrics HTTP/1.1\r\nHost: admin\r\n\r\n").readHead();
      assertEquals(200, head.status());
      assertEquals("7", head.header("content-length"));
      assertEquals("no-store", head.header("cache-control"));
      // Had a body been sent, this would read it as the next status line.
      assertEquals("ok\n", c.send(get("/healthz")).read().body());
    }
  }

  @Test
  void otherMethods_405_withAllow() throws Exception {
    try (RawHttp c = connect()) {
      for (String method : new String[] {"DELETE", "PUT", "OPTIONS", "BREW"}) {
        RawHttp.Response r =
            c.send(method + " /metrics HTTP/1.1\r\nHost: admin\r\nContent-Length: 0\r\n\r\n")
                .read();
        assertEquals(405, r.status(), method);
        assertEquals("GET, HEAD", r.header("allow"), method);
      }
      assertEquals(200, c.send(get("/metrics")).read().status(), "the connection is still served");
    }
  }

  @Test
  void malformedRequest_400_andClosed() throws Exception {
    try (RawHttp c = connect()) {
      RawHttp.Response r = c.send("GET /healthz HTTP/1.1\r\nno colon here\r\n\r\n").read();
      assertEquals(400, r.status());
      assertTrue(c.closedByServer());
    }
    try (RawHttp c = connect()) {
      RawHttp.Response r = c.send("GET /healthz HTTP/1.1\r\nContent-Length: x\r\n\r\n").read();
      assertEquals(400, r.status());
      assertTrue(c.closedByServer());
    }
  }

  @Test
  void bodyOverTheLimit_413InItsTurn_andClosed_theBodyUnread() throws Exception {
    try (RawHttp c = connect()) {
      c.send(
          get("/first")
              + "POST /api/x HTTP/1.1\r\nHost: admin\r\nContent-Type: application/json\r\n"
              + "Content-Length: "
              + (AdminServer.MAX_BODY_BYTES + 1)
              + "\r\n\r\n{");
      assertEquals("first\n", c.read().body(), "the request before it is answered first");
      RawHttp.Response r = c.read();
      assertEquals(413, r.status());
      assertEquals("close", r.header("connection"));
      assertTrue(c.closedByServer());
    }
    try (RawHttp c = connect()) {
      // Chunked: the size is known only as the body arrives.
      String chunk = "x".repeat(64 * 1024);
      c.send(
          "POST /api/x HTTP/1.1\r\nHost: admin\r\nContent-Type: application/json\r\n"
              + "Transfer-Encoding: chunked\r\n\r\n");
      // The chunk that takes the body past the limit is the last one sent.
      for (int sent = 0; sent <= AdminServer.MAX_BODY_BYTES; sent += chunk.length()) {
        c.send(Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n");
      }
      assertEquals(413, c.read().status());
      assertTrue(c.closedByServer());
    }
  }

  @Test
  void bodyAtTheLimit_served() throws Exception {
    try (RawHttp c = connect()) {
      byte[] body = new byte[1024 * 1024];
      java.util.Arrays.fill(body, (byte) ' ');
      c.send(
          "POST /api/x HTTP/1.1\r\nHost: admin\r\nContent-Type: application/json\r\n"
              + "Content-Length: "
              + body.length
              + "\r\n\r\n");
      RawHttp.Response r = c.send(body).read();
      assertEquals(200, r.status());
      assertTrue(r.body().contains("\"bytes\" : " + body.length), r.body());
    }
  }

  @Test
  void headersOverTheLimit_refused_andClosed() throws Exception {
    try (RawHttp c = connect()) {
      RawHttp.Response r =
          c.send(
                  "GET /healthz HTTP/1.1\r\nHost: admin\r\nX-Big: "
                      + "a".repeat(10_000)
                      + "\r\n\r\n")
              .read();
      assertEquals(400, r.status());
      assertTrue(c.closedByServer());
    }
    try (RawHttp c = connect()) {
      RawHttp.Response r = c.send(get("/healthz?" + "a".repeat(10_000))).read();
      assertEquals(400, r.status());
      assertTrue(c.closedByServer());
    }
  }

  @Test
  void dotSegments_reachNoOtherPath() throws Exception {
    try (RawHttp c =
        connect(
            new AdminConfig(
                true,
                "0.0.0.0",
                0,
                "/metrics",
                Optional.of(new Secret(TOKEN)),
                Optional.empty()))) {
      for (String path :
          new String[] {
            "/healthz/../metrics", "/healthz/%2e%2e/metrics", "/healthz%2f..%2fmetrics", "//metrics"
          }) {
        RawHttp.Response r = c.send(get(path)).read();
        assertEquals(404, r.status(), path);
        assertFalse(r.body().contains("scrape"), path);
      }
      RawHttp.Response api = c.send(get("/api/../metrics")).read();
      assertEquals(401, api.status(), "under /api/, whatever follows: credentials first");
      assertNull(api.header("content-location"));
    }
  }

  @Test
  void silentClient_closedAtTheRequestTimeout() throws Exception {
    try (RawHttp c = connect(TestConfigs.adminLoopback(0), Duration.ofMillis(300))) {
      assertTrue(c.closedByServer());
    }
  }

  @Test
  void tricklingClient_closedAtTheRequestTimeout_thoughItNeverFallsSilent() throws Exception {
    try (RawHttp c = connect(TestConfigs.adminLoopback(0), Duration.ofMillis(500))) {
      c.send("GET /healthz HTTP/1.1\r\nX-Slow: ");
      long started = System.nanoTime();
      Thread trickle =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < 200; i++) {
                    c.send("a");
                    Thread.sleep(50);
                  }
                } catch (IOException | InterruptedException closed) {
                  // what the test expects
                }
              });
      trickle.start();
      try {
        assertTrue(c.closedByServer());
        assertTrue(
            System.nanoTime() - started < TimeUnit.SECONDS.toNanos(8),
            "closed while the client was still sending");
      } finally {
        trickle.interrupt();
        trickle.join();
      }
    }
  }

  @Test
  void keptAliveConnection_closedWhenIdleForTheRequestTimeout_butNotWhileItsAnswerIsWorkedOn()
      throws Exception {
    // Long enough that a loaded machine still gets each request across in time.
    try (RawHttp c = connect(TestConfigs.adminLoopback(0), Duration.ofSeconds(2))) {
      assertEquals(
          "done\n", c.send(get("/busy?ms=2500")).read().body(), "a slow handler is waited for");
      assertEquals("ok\n", c.send(get("/healthz")).read().body());
      assertTrue(c.closedByServer(), "then, idle, the connection goes");
    }
  }
}
