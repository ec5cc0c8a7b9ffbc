package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Asking an Open Policy Agent after the local policy allowed a request ({@code policy.opa}). OPA can only
 * refuse more: it is asked only about what the local rules and grants let through.
 *
 * @param url OPA's REST API, {@code http://} or {@code https://}, without a path (e.g. {@code
 *     http://127.0.0.1:8181})
 * @param caFile for https: the PEM CA bundle OPA's certificate must chain to; empty: the JVM's trust store
 * @param token bearer token OPA's {@code --authentication=token} expects ({@code token_file}); never logged
 * @param path the decision document, e.g. {@code sparkgate/allow}: POSTed to {@code /v1/data/<path>}
 * @param timeout how long one decision may take, connection included (default 250ms)
 * @param allowOnError what an unreachable, slow or nonsensical OPA means: false ({@code on_error: deny}, the
 *     default) refuses the request, true lets the local decision stand
 * @param cacheEntries how many decisions are remembered, keyed by the whole input document; 0: none
 * @param cacheTtl how long a decision is remembered (default 10s): a changed bundle takes effect within it
 */
public record OpaConfig(
    URI url,
    Optional<Path> caFile,
    Optional<Secret> token,
    String path,
    Duration timeout,
    boolean allowOnError,
    int cacheEntries,
    Duration cacheTtl) {

  public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(250);
  public static final int DEFAULT_CACHE_ENTRIES = 10_000;
  public static final Duration DEFAULT_CACHE_TTL = Duration.ofSeconds(10);

  /** Rego package path segments: what OPA's Data API accepts after {@code /v1/data/}. */
  private static final Pattern DOCUMENT =
      Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*");

  /** The URL decisions are POSTed to. */
  public URI decisionUrl() {
    String base = url.toString();
    return URI.create(
        (base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + "/v1/data/" + path);
  }

  static OpaConfig read(YamlNode node) {
    node.allowOnly("url", "ca_file", "token_file", "path", "timeout", "on_error", "cache");
    URI url = url(node, node.requiredString("url", "OPA's REST API, e.g. http://127.0.0.1:8181"));
    boolean https = url.getScheme().equalsIgnoreCase("https");
    if (node.has("ca_file") && !https) {
      throw node.errorAt(
          "ca_file", "is for an https:// url; OPA at " + url + " is reached in the clear");
    }
    String path = node.requiredString("path", "the decision document, e.g. sparkgate/allow");
    String trimmed = path.startsWith("/") ? path.substring(1) : path;
    if (trimmed.startsWith("v1/data/")) trimmed = trimmed.substring("v1/data/".length());
    if (!DOCUMENT.matcher(trimmed).matches()) {
      throw node.errorAt(
          "path",
          "must name a decision document as package path and rule, e.g. sparkgate/allow for package"
              + " sparkgate's rule allow; got '"
              + path
              + "'");
    }
    String onError = node.string("on_error", "deny").toLowerCase(Locale.ROOT);
    if (!onError.equals("deny") && !onError.equals("allow")) {
      throw node.errorAt(
          "on_error",
          "must be deny (refuse while OPA cannot answer, the default) or allow, got '"
              + onError
              + "'");
    }
    int entries = DEFAULT_CACHE_ENTRIES;
    Duration ttl = DEFAULT_CACHE_TTL;
    if (node.has("cache")) {
      YamlNode cache = node.section("cache");
      cache.allowOnly("max_entries", "ttl");
      entries = cache.integer("max_entries", DEFAULT_CACHE_ENTRIES, 0, 10_000_000);
      ttl = cache.duration("ttl", DEFAULT_CACHE_TTL, Duration.ofMillis(1), Duration.ofHours(1));
    }
    return new OpaConfig(
        url,
        node.existingFile("ca_file"),
        node.existingFile("token_file").map(p -> Secret.readFile(node, "token_file", p)),
        trimmed,
        node.duration("timeout", DEFAULT_TIMEOUT, Duration.ofMillis(1), Duration.ofSeconds(30)),
        onError.equals("allow"),
        entries,
        ttl);
  }

  private static URI url(YamlNode node, String text) {
    URI uri;
    try {
      uri = URI.create(text.strip());
    } catch (IllegalArgumentException e) {
      throw node.errorAt("url", "is not a valid URL");
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
      throw node.errorAt("url", "must be an http:// or https:// URL of OPA, got " + text);
    }
    if (uri.getRawUserInfo() != null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
      throw node.errorAt(
          "url",
          "must be OPA's address alone (no user, query or fragment; a token goes in token_file), got "
              + uri.getScheme()
              + "://"
              + uri.getHost());
    }
    String p = uri.getRawPath();
    if (p != null && !p.isEmpty() && !p.equals("/")) {
      throw node.errorAt(
          "url",
          "must be OPA's address without a path (the decision document goes in path:), got "
              + text);
    }
    return uri;
  }
}
