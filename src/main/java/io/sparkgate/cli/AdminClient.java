package io.sparkgate.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;

/**
 * Calls the admin API of one listener for {@code sparkgate admin}: JSON in and out, the admin token as a bearer
 * header when there is one. Redirects are not followed, so the token goes only where {@code --url} says.
 */
final class AdminClient {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

  /** The API answered with an error, or could not be reached: the command exits 1 with this message. */
  static final class Failed extends RuntimeException {
    Failed(String message) {
      super(message, null, false, false);
    }
  }

  private final URI base;
  private final Optional<String> token;
  private final HttpClient http;

  /**
   * @param url the listener, checked by {@link #base}
   * @param tls null for the JVM's default trust and no client certificate
   */
  AdminClient(String url, Optional<String> token, SSLContext tls) {
    this.base = base(url);
    this.token = token;
    HttpClient.Builder builder =
        HttpClient.newBuilder()
            .connectTimeout(CONNECT_TIMEOUT)
            .followRedirects(HttpClient.Redirect.NEVER);
    if (tls != null) builder.sslContext(tls);
    this.http = builder.build();
  }

  /**
   * The listener's base URL without a trailing slash. Plain http is refused beyond loopback: the token and
   * whatever the operator does would cross the network readable by anyone on the way.
   */
  static URI base(String url) {
    URI u;
    try {
      u = new URI(url);
    } catch (URISyntaxException e) {
      throw new Refused("--url '" + url + "' is not a URL: " + e.getReason());
    }
    String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
    if (!(scheme.equals("https") || scheme.equals("http")) || u.getHost() == null) {
      throw new Refused("--url must be https://host:port (the admin listener), got '" + url + "'");
    }
    if (u.getRawQuery() != null || u.getRawFragment() != null || u.getRawUserInfo() != null) {
      throw new Refused("--url must be the listener's address alone, without '?', '#' or user@");
    }
    if (scheme.equals("http") && !loopback(u.getHost())) {
      throw new Refused(
          "--url "
              + url
              + " is plain http beyond loopback: the admin token would cross the network in the"
              + " clear; use https:// (admin.tls on the proxy)");
    }
    return URI.create(url.replaceAll("/+$", ""));
  }

  /**
   * Whether {@code host} is {@code localhost} or a loopback address literal. Other names are not resolved: the
   * HTTP client would resolve them again, and could be answered differently.
   */
  static boolean loopback(String host) {
    String h = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    if (h.equalsIgnoreCase("localhost")) return true;
    if (!h.matches("[0-9.]+") && !h.contains(":")) return false;
    try {
      return InetAddress.getByName(h).isLoopbackAddress(); // a literal: no lookup
    } catch (UnknownHostException e) {
      return false;
    }
  }

  /**
   * One path segment: every character outside RFC 3986's unreserved set percent-encoded as UTF-8, so that a
   * name holding '/' (a SPIFFE ID) stays one segment, and '+' is not read as a space.
   */
  static String segment(String name) {
    StringBuilder out = new StringBuilder();
    for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if ((c >= 'A' && c <= 'Z')
          || (c >= 'a' && c <= 'z')
          || (c >= '0' && c <= '9')
          || c == '-'
          || c == '.'
          || c == '_'
          || c == '~') {
        out.append((char) c);
      } else {
        out.append('%').append(String.format(Locale.ROOT, "%02X", c));
      }
    }
    return out.toString();
  }

  /** A GET: the answer's body, which must be JSON. */
  String get(String path) {
    return send(path, request(path).GET());
  }

  String post(String path, JsonNode body) {
    return send(
        path,
        request(path)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body.toString())));
  }

  String delete(String path) {
    return send(path, request(path).DELETE());
  }

  private HttpRequest.Builder request(String path) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(REQUEST_TIMEOUT)
            .header("Accept", "application/json");
    token.ifPresent(t -> b.header("Authorization", "Bearer " + t));
    return b;
  }

  private String send(String path, HttpRequest.Builder request) {
    HttpResponse<String> r;
    try {
      r = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Failed("interrupted before " + base + " answered");
    } catch (IOException e) {
      throw new Failed(unreachable(e));
    }
    if (r.statusCode() / 100 == 2) return r.body();
    throw new Failed(refusal(r.statusCode(), r.body()));
  }

  private String unreachable(IOException e) {
    if (e instanceof ConnectException) {
      return "cannot connect to " + base + " (is the admin listener there?)";
    }
    if (e instanceof HttpTimeoutException) {
      return base + " did not answer within " + REQUEST_TIMEOUT.toSeconds() + " s";
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SSLException) {
        return "TLS with "
            + base
            + " failed: "
            + t.getMessage()
            + " (--ca-file names the CA of admin.tls's certificate)";
      }
    }
    return "cannot reach " + base + ": " + e;
  }

  /** The server's error message with its status; for a 401, which credentials to give. */
  private String refusal(int status, String body) {
    if (status == 401) {
      return token.isPresent()
          ? "the admin listener did not accept the token (HTTP 401): --token-file must hold the"
              + " proxy's admin.token_file token"
          : "the admin listener wants credentials (HTTP 401): give --token-file with the proxy's"
              + " admin token, or --cert-file and --key-file for a client certificate";
    }
    try {
      JsonNode error = JSON.readTree(body).path("error");
      if (error.isTextual()) return error.asText() + " (HTTP " + status + ")";
    } catch (IOException notJson) {
      // a proxy in between, or not the admin listener: show the start of what came
    }
    String first = body.strip().lines().findFirst().orElse("");
    if (first.length() > 200) first = first.substring(0, 200) + "...";
    return "HTTP " + status + (first.isEmpty() ? "" : ": " + first);
  }
}
