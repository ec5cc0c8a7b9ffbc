package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Who may use the proxy and how their identity is established.
 *
 * <p>A configuration file must have an {@code auth} section enabling at least one method ({@code anonymous:
 * true} is the explicit way to accept everyone). {@link #disabled()}, authentication OFF with the client's
 * declared {@code user_id} forwarded unchanged, is only for configurations built in code (tests, tools); the
 * proxy warns loudly at start when it runs with it.
 *
 * @param methods the enabled methods in the order they are tried
 * @param userIdMismatch what to do when a client declares a {@code user_id} other than its principal
 * @param secretPatterns {@link Glob#anyCase} globs of Spark conf keys whose values never reach a client;
 *     {@code spark.connect.authenticate.token} is always among them
 * @param userContextExtensions which {@code UserContext.extensions} reach the server
 * @param revocations where revocations are kept without Redis, and the denied JWT ids
 */
public record AuthConfig(
    boolean enabled,
    List<Method> methods,
    Optional<Jwt> jwt,
    List<StaticToken> staticTokens,
    Optional<ClientCert> clientCert,
    UserIdMismatch userIdMismatch,
    List<String> secretPatterns,
    TokenCache tokenCache,
    UserContextExtensions userContextExtensions,
    Revocations revocations) {

  /** The Spark conf holding the backend's own pre-shared token: never shown to clients. */
  public static final String SPARK_TOKEN_KEY = "spark.connect.authenticate.token";

  public static final List<String> DEFAULT_SECRET_PATTERNS =
      List.of("*password*", "*secret*", "*token*", "*credential*", "*fs.s3a.*.key");

  public enum Method {
    JWT,
    STATIC_TOKENS,
    CLIENT_CERT,
    ANONYMOUS;

    String key() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  public enum UserIdMismatch {
    OVERWRITE,
    REJECT
  }

  /**
   * JWT verification.
   *
   * @param jwksCaFile PEM CA bundle trusted for {@code jwks_url} and {@code oidc_discovery_url} instead of
   *     the JVM's default trust store (a private IdP, or a test)
   * @param jwksCacheTtl how long fetched keys are used before they are fetched again
   * @param jwksMinRefreshInterval an unknown {@code kid} triggers at most one fetch per interval
   * @param algorithms the accepted {@code alg} values; never {@code none}
   */
  public record Jwt(
      Optional<Path> jwksFile,
      Optional<URI> jwksUrl,
      Optional<URI> oidcDiscoveryUrl,
      List<Path> publicKeyFiles,
      Optional<Path> hmacSecretFile,
      Optional<Path> jwksCaFile,
      Duration jwksCacheTtl,
      Duration jwksMinRefreshInterval,
      Duration jwksFetchTimeout,
      String issuer,
      List<String> audience,
      Set<String> algorithms,
      Duration clockSkew,
      Optional<Duration> maxLifetime,
      List<String> requiredClaims,
      String principalClaim,
      Optional<String> groupsClaim,
      Optional<String> tenantClaim) {

    public static final Set<String> ASYMMETRIC_ALGORITHMS =
        Set.of("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512");
    public static final Set<String> HMAC_ALGORITHMS = Set.of("HS256", "HS384", "HS512");

    static Jwt read(YamlNode node) {
      node.allowOnly(
          "jwks_file",
          "jwks_url",
          "oidc_discovery_url",
          "public_key_files",
          "hmac_secret_file",
          "jwks_ca_file",
          "jwks_cache_ttl",
          "jwks_min_refresh_interval",
          "jwks_fetch_timeout",
          "issuer",
          "audience",
          "algorithms",
          "clock_skew",
          "max_lifetime",
          "required_claims",
          "principal_claim",
          "groups_claim",
          "tenant_claim");
      Optional<Path> jwksFile = node.existingFile("jwks_file");
      Optional<URI> jwksUrl = node.optionalString("jwks_url").map(u -> https(node, "jwks_url", u));
      Optional<URI> discovery =
          node.optionalString("oidc_discovery_url").map(u -> https(node, "oidc_discovery_url", u));
      List<Path> pems = node.existingFiles("public_key_files");
      Optional<Path> hmac = node.existingFile("hmac_secret_file");
      if (jwksUrl.isPresent() && discovery.isPresent()) {
        throw node.error(
            "set jwks_url or oidc_discovery_url, not both (discovery finds the JWKS URL itself)");
      }
      boolean asymmetricKeys =
          jwksFile.isPresent() || jwksUrl.isPresent() || discovery.isPresent() || !pems.isEmpty();
      if (hmac.isPresent() && asymmetricKeys) {
        // Mixing them would let a token signed with HS256 and a *public* key's bytes as the secret
        // verify.
        throw node.errorAt(
            "hmac_secret_file",
            "cannot be combined with RSA/EC keys (jwks_file, jwks_url, "
                + "oidc_discovery_url, public_key_files): an HMAC secret is never accepted where public keys are");
      }
      if (hmac.isEmpty() && !asymmetricKeys) {
        throw node.error(
            "needs keys: one of jwks_file, jwks_url, oidc_discovery_url, public_key_files or hmac_secret_file");
      }
      Optional<Path> caFile = node.existingFile("jwks_ca_file");
      if (caFile.isPresent() && jwksUrl.isEmpty() && discovery.isEmpty()) {
        throw node.errorAt("jwks_ca_file", "only applies to jwks_url or oidc_discovery_url");
      }
      Set<String> allowedFamily = hmac.isPresent() ? HMAC_ALGORITHMS : ASYMMETRIC_ALGORITHMS;
      Set<String> algorithms = new LinkedHashSet<>();
      for (String alg : node.stringList("algorithms")) {
        if (alg.equalsIgnoreCase("none")) {
          throw node.errorAt(
              "algorithms", "'none' is never accepted: unsigned tokens prove nothing");
        }
        if (!ASYMMETRIC_ALGORITHMS.contains(alg) && !HMAC_ALGORITHMS.contains(alg)) {
          throw node.errorAt(
              "algorithms",
              "unsupported algorithm '"
                  + alg
                  + "' (supported: "
                  + String.join(", ", new java.util.TreeSet<>(ASYMMETRIC_ALGORITHMS))
                  + ", HS256, HS384, HS512)");
        }
        if (!allowedFamily.contains(alg)) {
          throw node.errorAt(
              "algorithms",
              "'"
                  + alg
                  + "' does not fit the configured keys ("
                  + (hmac.isPresent()
                      ? "an HMAC secret: use HS256/HS384/HS512"
                      : "RSA/EC keys: HMAC algorithms are " + "never accepted with public keys")
                  + ")");
        }
        algorithms.add(alg);
      }
      if (algorithms.isEmpty()) {
        algorithms.addAll(
            hmac.isPresent()
                ? List.of("HS256", "HS384", "HS512")
                : List.of(
                    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
                    "ES512"));
      }
      String issuer =
          node.requiredString(
              "issuer",
              "the exact 'iss' of accepted tokens, e.g. https://idp.example.com/realms/spark");
      List<String> audience = node.stringOrList("audience");
      if (audience.isEmpty()) {
        throw node.errorAt(
            "audience",
            "is required: the 'aud' value(s) your IdP puts in tokens meant for Spark, "
                + "so that tokens minted for other applications are refused");
      }
      Duration ttl =
          node.duration(
              "jwks_cache_ttl", Duration.ofMinutes(5), Duration.ofSeconds(1), Duration.ofDays(1));
      Duration minRefresh =
          node.duration(
              "jwks_min_refresh_interval",
              Duration.ofSeconds(30),
              Duration.ZERO,
              Duration.ofHours(1));
      return new Jwt(
          jwksFile,
          jwksUrl,
          discovery,
          List.copyOf(pems),
          hmac,
          caFile,
          ttl,
          minRefresh,
          node.duration(
              "jwks_fetch_timeout",
              Duration.ofSeconds(5),
              Duration.ofMillis(100),
              Duration.ofMinutes(1)),
          issuer,
          audience,
          Set.copyOf(algorithms),
          node.duration(
              "clock_skew", Duration.ofSeconds(60), Duration.ZERO, Duration.ofMinutes(10)),
          node.has("max_lifetime")
              ? Optional.of(
                  node.duration("max_lifetime", null, Duration.ofSeconds(1), Duration.ofDays(365)))
              : Optional.empty(),
          node.stringList("required_claims"),
          node.string("principal_claim", "sub"),
          node.optionalString("groups_claim"),
          node.optionalString("tenant_claim"));
    }

    private static URI https(YamlNode node, String key, String text) {
      URI uri;
      try {
        uri = URI.create(text);
      } catch (IllegalArgumentException e) {
        throw node.errorAt(key, "not a valid URL: " + text);
      }
      if (!"https".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null) {
        throw node.errorAt(
            key,
            "must be an https:// URL (keys fetched in the clear could be swapped), got " + text);
      }
      return uri;
    }
  }

  /**
   * One pre-shared token. Only its SHA-256 is stored, so the configuration file does not hold the token.
   *
   * @param sha256 lower-case hex SHA-256 of the token's UTF-8 bytes ({@code printf %s TOKEN | sha256sum})
   */
  public record StaticToken(
      String sha256, String principal, List<String> groups, Optional<String> tenant) {}

  /**
   * Identity from the verified mutual-TLS client certificate.
   *
   * @param principalFrom {@code san} (first email, URI or DNS subject alternative name) or {@code cn}
   */
  public record ClientCert(String principalFrom) {}

  /**
   * The {@code UserContext.extensions} ({@code google.protobuf.Any}) a client may send on to the server
   * ({@code auth.user_context_extensions}). The server's plugins may trust them as identity, so only listed
   * type URLs pass; the default lists the one Spark's own clients send, a Declarative Pipelines client's
   * PipelineAnalysisContext (4.1+).
   *
   * @param allow type URLs kept in the request (and inspected: an EXTENSION fact with location usercontext)
   * @param refuseOthers true ({@code others: refuse}): a request carrying any other extension is refused
   *     (PERMISSION_DENIED); false ({@code others: strip}, the default): the others are removed
   */
  public record UserContextExtensions(Set<String> allow, boolean refuseOthers) {
    public static final String PIPELINE_ANALYSIS_CONTEXT =
        "type.googleapis.com/spark.connect.PipelineAnalysisContext";

    public static final UserContextExtensions DEFAULTS =
        new UserContextExtensions(Set.of(PIPELINE_ANALYSIS_CONTEXT), false);

    public UserContextExtensions {
      allow = Set.copyOf(allow);
    }

    static UserContextExtensions read(YamlNode node) {
      node.allowOnly("allow", "others");
      Set<String> allow = new LinkedHashSet<>();
      if (node.has("allow")) {
        for (String url : node.stringList("allow")) {
          if (!url.contains("/")
              || url.endsWith("/")
              || url.chars().anyMatch(Character::isWhitespace))
            throw node.errorAt(
                "allow",
                "'"
                    + url
                    + "' is not a type URL: write it as the client sends it, e.g. "
                    + PIPELINE_ANALYSIS_CONTEXT);
          allow.add(url);
        }
      } else {
        allow.addAll(DEFAULTS.allow());
      }
      String others = node.string("others", "strip");
      boolean refuse =
          switch (others) {
            case "strip" -> false;
            case "refuse" -> true;
            default ->
                throw node.errorAt("others", "must be strip or refuse, got '" + others + "'");
          };
      return new UserContextExtensions(allow, refuse);
    }
  }

  /**
   * Principals and tokens an operator cut off ({@code auth.revocations}). With {@code sessions.store: redis}
   * they are kept in Redis, shared by the replicas; else in {@code state_file}, or in memory only.
   *
   * @param stateFile without Redis, where revocations made through the admin API survive a restart
   * @param deniedJtiFile JWT ids ({@code jti}) refused, one a line ({@code #} starts a comment); re-read when
   *     it changes
   */
  public record Revocations(Optional<Path> stateFile, Optional<Path> deniedJtiFile) {
    public static final Revocations NONE = new Revocations(Optional.empty(), Optional.empty());

    static Revocations read(YamlNode node, boolean jwt) {
      node.allowOnly("state_file", "denied_jti_file");
      Optional<Path> state = node.optionalString("state_file").map(node::resolve);
      state.ifPresent(
          f -> {
            Path parent = f.toAbsolutePath().getParent();
            if (parent == null || !java.nio.file.Files.isDirectory(parent)) {
              throw node.errorAt(
                  "state_file", "its directory " + parent + " does not exist: create it first");
            }
          });
      Optional<Path> denied = node.existingFile("denied_jti_file");
      if (denied.isPresent() && !jwt) {
        throw node.errorAt(
            "denied_jti_file", "only JWTs carry a jti, and auth.jwt is not configured");
      }
      return new Revocations(state, denied);
    }
  }

  /** The cache of verified JWTs; entries never outlive the token's {@code exp}. */
  public record TokenCache(int maxEntries, Duration maxAge) {}

  private static final Pattern SHA256_HEX = Pattern.compile("[0-9a-f]{64}");
  private static final Pattern PLACEHOLDER =
      Pattern.compile("REPLACE[-_]ME", Pattern.CASE_INSENSITIVE);

  /** Authentication off, for configurations built in code; a file cannot ask for it. */
  public static AuthConfig disabled() {
    return new AuthConfig(
        false,
        List.of(),
        Optional.empty(),
        List.of(),
        Optional.empty(),
        UserIdMismatch.OVERWRITE,
        withSparkToken(DEFAULT_SECRET_PATTERNS),
        new TokenCache(10_000, Duration.ofMinutes(5)),
        UserContextExtensions.DEFAULTS,
        Revocations.NONE);
  }

  static AuthConfig read(YamlNode parent) {
    if (!parent.has("auth")) {
      return disabled();
    }
    YamlNode node = parent.section("auth");
    node.allowOnly(
        "methods",
        "jwt",
        "static_tokens",
        "client_cert",
        "anonymous",
        "user_id_mismatch",
        "secret_patterns",
        "token_cache",
        "user_context_extensions",
        "revocations");
    refusePlaceholders("auth", node);
    Optional<Jwt> jwt =
        node.has("jwt") ? Optional.of(Jwt.read(node.section("jwt"))) : Optional.empty();
    List<StaticToken> tokens = staticTokens(node);
    Optional<ClientCert> cert = Optional.empty();
    if (node.has("client_cert")) {
      YamlNode c = node.section("client_cert");
      c.allowOnly("principal_from");
      String from = c.string("principal_from", "cn");
      if (!from.equals("cn") && !from.equals("san")) {
        throw c.errorAt("principal_from", "must be cn or san, got '" + from + "'");
      }
      cert = Optional.of(new ClientCert(from));
    }
    Anonymous anonymous = anonymous(node);

    Set<Method> configured = new LinkedHashSet<>();
    jwt.ifPresent(j -> configured.add(Method.JWT));
    if (!tokens.isEmpty()) {
      configured.add(Method.STATIC_TOKENS);
    }
    cert.ifPresent(c -> configured.add(Method.CLIENT_CERT));
    if (anonymous == Anonymous.ONLY && !configured.isEmpty()) {
      // An operator who adds jwt beside anonymous: true believes tokens are now required; they are
      // not.
      throw node.errorAt(
          "anonymous",
          "is true beside "
              + configured.stream().map(Method::key).toList()
              + ": callers with no credentials would still be let in as 'anonymous'. Remove it to"
              + " require credentials, or write anonymous: fallback to keep that on purpose");
    }
    if (anonymous == Anonymous.FALLBACK && configured.isEmpty()) {
      throw node.errorAt(
          "anonymous",
          "is fallback, but no other method is configured to fall back from: configure jwt,"
              + " static_tokens or client_cert, or write anonymous: true to let everyone in");
    }
    if (anonymous != Anonymous.OFF) {
      configured.add(Method.ANONYMOUS);
    }
    if (configured.isEmpty()) {
      throw node.error(
          "enables no method: configure jwt, static_tokens or client_cert, or set anonymous: true");
    }
    List<Method> methods = new ArrayList<>();
    if (node.has("methods")) {
      for (String name : node.stringList("methods")) {
        Method m =
            configured.stream()
                .filter(x -> x.key().equals(name))
                .findFirst()
                .orElseThrow(
                    () ->
                        node.errorAt(
                            "methods",
                            "'"
                                + name
                                + "' is not a configured method (configured here: "
                                + configured.stream().map(Method::key).toList()
                                + ")"));
        if (methods.contains(m)) {
          throw node.errorAt("methods", "lists '" + name + "' twice");
        }
        methods.add(m);
      }
      if (methods.size() != configured.size()) {
        throw node.errorAt(
            "methods",
            "must list every configured method; missing "
                + configured.stream().filter(m -> !methods.contains(m)).map(Method::key).toList());
      }
    } else {
      // Default order: the strongest evidence first; anonymous always last.
      for (Method m :
          List.of(Method.CLIENT_CERT, Method.JWT, Method.STATIC_TOKENS, Method.ANONYMOUS)) {
        if (configured.contains(m)) {
          methods.add(m);
        }
      }
    }
    String mismatch = node.string("user_id_mismatch", "overwrite");
    UserIdMismatch userIdMismatch =
        switch (mismatch) {
          case "overwrite" -> UserIdMismatch.OVERWRITE;
          case "reject" -> UserIdMismatch.REJECT;
          default ->
              throw node.errorAt(
                  "user_id_mismatch", "must be overwrite or reject, got '" + mismatch + "'");
        };
    List<String> patterns =
        node.has("secret_patterns") ? node.stringList("secret_patterns") : DEFAULT_SECRET_PATTERNS;
    YamlNode cache = node.section("token_cache");
    cache.allowOnly("max_entries", "max_age");
    TokenCache tokenCache =
        new TokenCache(
            cache.integer("max_entries", 10_000, 0, 10_000_000),
            cache.duration("max_age", Duration.ofMinutes(5), Duration.ZERO, Duration.ofDays(1)));
    return new AuthConfig(
        true,
        List.copyOf(methods),
        jwt,
        tokens,
        cert,
        userIdMismatch,
        withSparkToken(patterns),
        tokenCache,
        node.has("user_context_extensions")
            ? UserContextExtensions.read(node.section("user_context_extensions"))
            : UserContextExtensions.DEFAULTS,
        node.has("revocations")
            ? Revocations.read(node.section("revocations"), jwt.isPresent())
            : Revocations.NONE);
  }

  private enum Anonymous {
    OFF,
    ONLY,
    FALLBACK
  }

  /** {@code anonymous}: true, false or fallback. */
  private static Anonymous anonymous(YamlNode node) {
    try {
      return node.bool("anonymous", false) ? Anonymous.ONLY : Anonymous.OFF;
    } catch (ConfigException notABoolean) {
      if (node.string("anonymous", "").equals("fallback")) return Anonymous.FALLBACK;
      throw node.errorAt("anonymous", "must be true, false or fallback");
    }
  }

  /**
   * Whether callers without credentials are let in as {@code anonymous} beside other methods ({@code
   * anonymous: fallback}): shown by readiness, the console and a metric, since it is easy to forget.
   */
  public boolean anonymousFallback() {
    return methods.contains(Method.ANONYMOUS) && methods.size() > 1;
  }

  /** Whether callers without credentials pass, as the admin API and console say it: off, only or fallback. */
  public String anonymousMode() {
    if (!methods.contains(Method.ANONYMOUS)) return "off";
    return anonymousFallback() ? "fallback" : "only";
  }

  /**
   * The shipped examples (proxy/sparkgate.yaml, the Kubernetes manifest) carry REPLACE-ME where the operator's
   * IdP goes. Such a value can pass every other check (an https URL with a host, a non-empty audience), so it is
   * refused by name: a proxy must never start trusting tokens for an IdP nobody chose.
   */
  private static void refusePlaceholders(String key, YamlNode node) {
    if (node.isMapping()) {
      node.entries().forEach(AuthConfig::refusePlaceholders);
    } else if (node.isSequence()) {
      node.items().forEach(item -> refusePlaceholders(key, item));
    } else if (!node.isNull() && PLACEHOLDER.matcher(node.scalar()).find()) {
      String what =
          switch (key) {
            case "issuer" -> "your IdP's issuer (the exact 'iss' of its tokens)";
            case "audience" -> "the 'aud' your IdP puts in tokens meant for Spark";
            case "jwks_url", "oidc_discovery_url" -> "your IdP's " + key;
            default -> "your own value";
          };
      throw node.error(
          "still the placeholder REPLACE-ME from the example: set "
              + what
              + " (docs/authentication.md)");
    }
  }

  private static List<StaticToken> staticTokens(YamlNode node) {
    List<StaticToken> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    List<YamlNode> items = node.sectionList("static_tokens");
    for (YamlNode item : items) {
      item.allowOnly("sha256", "principal", "groups", "tenant");
      String hash =
          item.requiredString(
                  "sha256", "hex SHA-256 of the token: printf %s \"$TOKEN\" | sha256sum")
              .toLowerCase(Locale.ROOT);
      if (!SHA256_HEX.matcher(hash).matches()) {
        throw item.errorAt(
            "sha256", "must be 64 hex digits (the SHA-256 of the token, never the token itself)");
      }
      if (!seen.add(hash)) {
        throw item.errorAt("sha256", "the same token hash appears twice");
      }
      out.add(
          new StaticToken(
              hash,
              item.requiredString("principal", "the user name this token stands for"),
              item.stringList("groups"),
              item.optionalString("tenant")));
    }
    return List.copyOf(out);
  }

  private static List<String> withSparkToken(List<String> patterns) {
    Set<String> all = new LinkedHashSet<>(patterns);
    all.add(SPARK_TOKEN_KEY);
    return List.copyOf(all);
  }
}
