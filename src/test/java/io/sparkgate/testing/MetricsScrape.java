package io.sparkgate.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads a proxy's metrics endpoint into samples keyed {@code name{label=value,...}}: labels sorted by name,
 * values unquoted, so tests can name a series without caring how the exposition orders its labels.
 */
public final class MetricsScrape {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private MetricsScrape() {}

  /** GET http://127.0.0.1:port/metrics, which must answer 200, parsed. */
  public static Map<String, Double> get(int port) throws IOException, InterruptedException {
    return parse(text(port));
  }

  /** The same, as the text the endpoint sent. */
  public static String text(int port) throws IOException, InterruptedException {
    HttpResponse<String> response =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException("metrics endpoint answered " + response.statusCode());
    }
    return response.body();
  }

  /** Prometheus's text format (label values without commas or escaped quotes, as the proxy's are). */
  public static Map<String, Double> parse(String text) {
    Map<String, Double> samples = new HashMap<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int space = line.lastIndexOf(' ');
      String series = line.substring(0, space);
      int brace = series.indexOf('{');
      String key = series;
      if (brace > 0) {
        Map<String, String> labels = new TreeMap<>();
        for (String pair :
            series.substring(brace + 1, series.length() - 1).split(",(?=[a-z_]+=\")")) {
          int eq = pair.indexOf('=');
          labels.put(pair.substring(0, eq), pair.substring(eq + 2, pair.length() - 1));
        }
        StringBuilder b = new StringBuilder(series.substring(0, brace)).append('{');
        labels.forEach((k, v) -> b.append(k).append('=').append(v).append(','));
        b.setLength(b.length() - 1);
        key = b.append('}').toString();
      }
      samples.put(key, Double.parseDouble(line.substring(space + 1)));
    }
    return samples;
  }
}
