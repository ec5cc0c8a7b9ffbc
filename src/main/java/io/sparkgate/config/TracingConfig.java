package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * OpenTelemetry traces ({@code tracing:}; off without the section): one span per call, exported over OTLP
 * (docs/tracing.md).
 *
 * @param endpoint the collector: for grpc its address ({@code http://127.0.0.1:4317}); for http/protobuf the
 *     traces URL, {@code /v1/traces} added when only a host and port are given
 * @param sampler the share of new traces sampled, 0 to 1; a client's sampled or unsampled traceparent is
 *     followed (parent-based)
 * @param headers what the exporter sends with each export (an API key), from {@code headers_file}; never
 *     logged
 * @param serviceName the {@code service.name} of the spans
 */
public record TracingConfig(
    URI endpoint,
    Protocol protocol,
    double sampler,
    Map<String, Secret> headers,
    String serviceName) {

  /** How spans are exported. */
  public enum Protocol {
    GRPC("grpc"),
    HTTP_PROTOBUF("http/protobuf");

    private final String key;

    Protocol(String key) {
      this.key = key;
    }

    /** As written in the configuration. */
    public String key() {
      return key;
    }
  }

  /** Every new trace is sampled: the SDK's own default, and a proxy's calls are few beside Spark's work. */
  public static final double DEFAULT_SAMPLER = 1.0;

  public static final String DEFAULT_SERVICE_NAME = "sparkgate";

  // HTTP/2 header names: lower-case tokens; names the transport sets itself are left to it.
  private static final Pattern HEADER_NAME = Pattern.compile("[a-z0-9][a-z0-9!#$%&'*+.^_`|~-]*");

  public TracingConfig {
    headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
  }

  static TracingConfig read(YamlNode node) {
    node.allowOnly("endpoint", "protocol", "sampler", "headers_file", "service_name");
    Protocol protocol = protocol(node);
    return new TracingConfig(
        endpoint(node, protocol),
        protocol,
        sampler(node),
        node.existingFile("headers_file").map(f -> headers(node, f)).orElse(Map.of()),
        node.string("service_name", DEFAULT_SERVICE_NAME));
  }

  private static Protocol protocol(YamlNode node) {
    String text = node.string("protocol", Protocol.GRPC.key());
    for (Protocol p : Protocol.values()) {
      if (p.key().equals(text)) return p;
    }
    throw node.errorAt("protocol", "must be grpc or http/protobuf, got '" + text + "'");
  }

  private static URI endpoint(YamlNode node, Protocol protocol) {
    String text =
        node.requiredString(
            "endpoint",
            "the OTLP collector's URL, such as http://127.0.0.1:4317 (grpc) or"
                + " http://127.0.0.1:4318 (http/protobuf)");
    URI uri;
    try {
      uri = new URI(text);
    } catch (URISyntaxException e) {
      uri = null;
    }
    String scheme =
        uri == null || uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw node.errorAt(
          "endpoint", "must be an http:// or https:// URL with host and port, got '" + text + "'");
    }
    if (uri.getHost() == null || uri.getPort() < 0) {
      throw node.errorAt(
          "endpoint", "must name a host and a port (4317 for grpc, 4318 for http/protobuf)");
    }
    if (uri.getUserInfo() != null || uri.getQuery() != null || uri.getFragment() != null) {
      throw node.errorAt(
          "endpoint",
          "must not carry credentials, a query or a fragment: put them in headers_file");
    }
    String path = uri.getPath() == null ? "" : uri.getPath();
    if (protocol == Protocol.GRPC) {
      if (!path.isEmpty() && !path.equals("/")) {
        throw node.errorAt(
            "endpoint",
            "for grpc is a host and port only (gRPC names its own path), got '" + text + "'");
      }
      return URI.create(scheme + "://" + uri.getRawAuthority());
    }
    if (path.isEmpty() || path.equals("/")) {
      return URI.create(scheme + "://" + uri.getRawAuthority() + "/v1/traces");
    }
    return uri;
  }

  private static double sampler(YamlNode node) {
    Optional<String> text = node.optionalString("sampler");
    if (text.isEmpty()) return DEFAULT_SAMPLER;
    double ratio;
    try {
      ratio = Double.parseDouble(text.get());
    } catch (NumberFormatException e) {
      ratio = Double.NaN;
    }
    if (!(ratio >= 0 && ratio <= 1)) {
      throw node.errorAt(
          "sampler",
          "must be the share of new traces sampled, from 0 to 1 (0.01 is 1%), got '"
              + text.get()
              + "'");
    }
    return ratio;
  }

  /**
   * {@code name: value} lines (blank lines and {@code #} comments skipped), as an OTLP collector or vendor
   * asks for them. Values are secrets: an error names the line, never its value.
   */
  private static Map<String, Secret> headers(YamlNode node, Path file) {
    String text;
    try {
      text = Files.readString(file);
    } catch (IOException e) {
      throw node.errorAt("headers_file", "cannot read " + file + ": " + e.getMessage());
    }
    Map<String, Secret> headers = new LinkedHashMap<>();
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.isEmpty() || line.startsWith("#")) continue;
      int colon = line.indexOf(':');
      String where = file + " line " + (i + 1);
      if (colon <= 0) {
        throw node.errorAt("headers_file", where + " must be 'name: value'");
      }
      String name = line.substring(0, colon).strip().toLowerCase(Locale.ROOT);
      String value = line.substring(colon + 1).strip();
      if (!HEADER_NAME.matcher(name).matches()) {
        throw node.errorAt("headers_file", where + ": '" + name + "' is not a header name");
      }
      if (name.endsWith("-bin") || name.startsWith("grpc-")) {
        throw node.errorAt(
            "headers_file", where + ": '" + name + "' is reserved by gRPC; name another header");
      }
      if (value.isEmpty()) {
        throw node.errorAt("headers_file", where + ": header " + name + " has no value");
      }
      if (headers.put(name, new Secret(value)) != null) {
        throw node.errorAt("headers_file", where + ": header " + name + " is given twice");
      }
    }
    if (headers.isEmpty()) {
      throw node.errorAt("headers_file", file + " holds no 'name: value' line");
    }
    return headers;
  }
}
