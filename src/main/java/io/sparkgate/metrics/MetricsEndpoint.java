package io.sparkgate.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side of the metrics: GET (or HEAD) on one path answers with the scrape; any other path is 404 and
 * any other method 405. The JDK's own server on one thread: a scrape every few seconds needs no more, and
 * a slow scraper cannot take threads from the proxy.
 */
final class MetricsEndpoint implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(MetricsEndpoint.class);
  /** Prometheus's text exposition format. */
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private final HttpServer server;
  private final ExecutorService thread;

  private MetricsEndpoint(HttpServer server, ExecutorService thread) {
    this.server = server;
    this.thread = thread;
  }

  static MetricsEndpoint start(String address, int port, String path, Supplier<String> scrape) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(address, port), 16);
    ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "sparkgate-metrics");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(thread);
    server.createContext("/", exchange -> {
      try (exchange) {
        answer(exchange, path, scrape);
      } catch (IOException | RuntimeException e) {
        log.warn("metrics request {} failed: {}", exchange.getRequestURI().getPath(), e.toString());
      }
    });
    server.start();
    return new MetricsEndpoint(server, thread);
  }

  private static void answer(HttpExchange exchange, String path, Supplier<String> scrape) throws IOException {
    String method = exchange.getRequestMethod();
    if (!exchange.getRequestURI().getPath().equals(path)) {
      text(exchange, 404, "not found: metrics are at " + path + "\n", method);
    } else if (!method.equals("GET") && !method.equals("HEAD")) {
      exchange.getResponseHeaders().set("Allow", "GET, HEAD");
      text(exchange, 405, "use GET\n", method);
    } else {
      exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
      send(exchange, 200, scrape.get().getBytes(StandardCharsets.UTF_8), method);
    }
  }

  private static void text(HttpExchange exchange, int status, String body, String method) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    send(exchange, status, body.getBytes(StandardCharsets.UTF_8), method);
  }

  private static void send(HttpExchange exchange, int status, byte[] body, String method) throws IOException {
    boolean head = method.equals("HEAD");
    exchange.sendResponseHeaders(status, head ? -1 : body.length);
    if (!head) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  /** The bound port (the configured one, or the one picked for port 0). */
  int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
    thread.shutdownNow();
  }
}
