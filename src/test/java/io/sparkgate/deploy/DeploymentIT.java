package io.sparkgate.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.ConfigException;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.testing.Toolchains;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The Kubernetes deployment as shipped, checked with the real tools by {@code deploy/check/run.sh}: helm
 * (built from source with Go) lints and renders the chart with its default values plus one authentication
 * method (bare, they must fail) and with {@code ci/full-values.yaml}, and every rendered object and the plain
 * manifests in {@code deploy/kubernetes/} are decoded against the Kubernetes API schema, offline, by a strict
 * decoder that refuses unknown and duplicate fields and unknown kinds. This test reads what the script printed
 * and rendered, and loads the plain manifest's configuration with the proxy's own loader. Needs Go; without it
 * the test is skipped, unless {@code SPARKGATE_CI=1}, which makes it a failure.
 */
class DeploymentIT {
  private static final Path OUT = Path.of("target/deploy-check");

  /** The chart's defaults plus {@code config.auth.anonymous: true}: bare, they render nothing. */
  private static final String DEFAULTS = "target/deploy-check/chart-default.yaml";

  /** The chart's defaults plus a JWT IdP. */
  private static final String JWT = "target/deploy-check/chart-jwt.yaml";

  private static final String FULL = "target/deploy-check/chart-full.yaml";
  private static final String MANIFESTS = "deploy/kubernetes/sparkgate.yaml";

  private static List<String> lines;

  @BeforeAll
  static void runChecks() throws Exception {
    String go = Toolchains.requireGo("to build helm and the Kubernetes schema checker");
    Path log = Files.createDirectories(Path.of("target")).resolve("deploy-check.log");
    ProcessBuilder builder =
        new ProcessBuilder("bash", "deploy/check/run.sh")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    Toolchains.putOnPath(builder, go);
    Process run = builder.start();
    // Building helm from source takes minutes on a machine without Go's caches, one on a warm one.
    boolean finished = run.waitFor(40, TimeUnit.MINUTES);
    if (!finished) {
      run.destroyForcibly();
    }
    lines = Files.readAllLines(log);
    String tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    assertTrue(finished, "deploy/check/run.sh did not finish in 40 minutes:\n" + tail);
    assertEquals(0, run.exitValue(), "deploy/check/run.sh failed:\n" + tail);
  }

  @Test
  void everyObject_passesTheStrictSchemaCheck() {
    // The negative cases' lines say FAIL too, as they must; none of the shipped objects may.
    assertEquals(
        List.of(), matching(": FAIL").stream().filter(l -> !l.startsWith("negative: ")).toList());
    assertEquals(
        List.of(
            "ConfigMap/sparkgate",
            "Deployment/sparkgate",
            "Service/sparkgate",
            "Service/spark-connect-headless",
            "PodDisruptionBudget/sparkgate",
            "NetworkPolicy/spark-connect-from-sparkgate",
            "Deployment/sparkgate-redis",
            "Service/sparkgate-redis",
            "NetworkPolicy/sparkgate-redis"),
        objects(MANIFESTS));
    // Names for release "sparkgate"; helm template's own order is by kind, so compare them sorted.
    assertEquals(
        List.of(
            "ConfigMap/sparkgate",
            "Deployment/sparkgate",
            "Deployment/sparkgate-redis",
            "NetworkPolicy/sparkgate-redis",
            "NetworkPolicy/sparkgate-spark-connect",
            "PodDisruptionBudget/sparkgate",
            "Service/sparkgate",
            "Service/sparkgate-redis"),
        objects(DEFAULTS).stream().sorted().toList());
    assertEquals(objects(DEFAULTS), objects(JWT));
    assertTrue(objects(FULL).contains("ConfigMap/sparkgate-policies"), String.join("\n", lines));
  }

  @Test
  void proxy_runsTwoReplicas_probedOverHttpOnTheAdminPort_withAGraceLongerThanTheDrain() {
    // Grace: drain_delay 5s + shutdown_grace 30s, plus 10 s (the manifests and the chart's
    // default).
    for (String source : List.of(MANIFESTS, DEFAULTS)) {
      String deployment = object(source, "Deployment/sparkgate");
      assertTrue(deployment.contains("replicas=2 terminationGracePeriodSeconds=45"), deployment);
      assertTrue(deployment.contains("ports=grpc:15003,admin:9464"), deployment);
      assertTrue(deployment.contains("readiness=HTTP:GET:/readyz:admin"), deployment);
      assertTrue(deployment.contains("liveness=HTTP:GET:/healthz:admin"), deployment);
      assertTrue(deployment.contains("startup=HTTP:GET:/healthz:admin"), deployment);
    }
    // drain_delay 10s + shutdown_grace 1m; HTTPS on the admin port.
    String full = object(FULL, "Deployment/sparkgate");
    assertTrue(full.contains("replicas=2 terminationGracePeriodSeconds=80"), full);
    assertTrue(full.contains("readiness=HTTPS:GET:/readyz:admin"), full);
  }

  @Test
  void onlySparkgate_reachesTheSparkServersAndRedis_andOneReplicaSurvivesEvictions() {
    String proxyPods =
        "app.kubernetes.io/component=proxy,app.kubernetes.io/instance=sparkgate,"
            + "app.kubernetes.io/name=sparkgate";
    assertTrue(
        object(MANIFESTS, "NetworkPolicy/spark-connect-from-sparkgate")
            .endsWith(
                "pods=app=spark-connect types=Ingress ingress-from=app=sparkgate ports=15002"));
    assertTrue(
        object(MANIFESTS, "NetworkPolicy/sparkgate-redis")
            .endsWith("types=Ingress ingress-from=app=sparkgate ports=6379"));
    assertTrue(
        object(DEFAULTS, "NetworkPolicy/sparkgate-spark-connect")
            .endsWith(
                "pods=app=spark-connect types=Ingress ingress-from=" + proxyPods + " ports=15002"));
    assertTrue(
        object(DEFAULTS, "NetworkPolicy/sparkgate-redis")
            .endsWith("ingress-from=" + proxyPods + " ports=6379"));
    // Spark in its own namespace: Sparkgate's pods are admitted from the release's namespace only.
    assertTrue(
        object(FULL, "NetworkPolicy/sparkgate-spark-connect")
            .contains(
                "ingress-from=ns(kubernetes.io/metadata.name=sparkgate)/"
                    + proxyPods
                    + " ports=15002"));
    for (String source : List.of(MANIFESTS, DEFAULTS)) {
      assertTrue(
          object(source, "PodDisruptionBudget/sparkgate").contains("minAvailable=1"), source);
    }
  }

  @Test
  void renderedConfigurations_useTheAdminSection_andNameOnlyMountedFiles() throws IOException {
    Map<String, Map<String, Object>> configs = new TreeMap<>();
    try (Stream<Path> files = Files.list(OUT.resolve("config"))) {
      for (Path file : files.toList()) {
        configs.put(file.getFileName().toString(), new Yaml().load(Files.readString(file)));
      }
    }
    assertEquals(
        List.of(
            "chart-default-sparkgate.yaml",
            "chart-full-sparkgate.yaml",
            "chart-jwt-sparkgate.yaml",
            "sparkgate-sparkgate.yaml"),
        List.copyOf(configs.keySet()));
    for (Map.Entry<String, Map<String, Object>> e : configs.entrySet()) {
      Map<String, Object> config = e.getValue();
      String name = e.getKey();
      assertNull(config.get("metrics"), name + ": the old metrics section");
      Map<String, Object> admin = section(config, "admin");
      assertEquals("0.0.0.0", admin.get("address"), name);
      assertEquals(9464, admin.get("port"), name);
      assertEquals("/etc/sparkgate/admin/token", admin.get("token_file"), name);
      assertNotNull(section(config, "listen").get("drain_delay"), name);
      assertEquals("redis", section(config, "sessions").get("store"), name);
      assertEquals(
          "redis://sparkgate-redis:6379/0", section(config, "sessions").get("redis_url"), name);
      String source =
          name.startsWith("chart-default")
              ? DEFAULTS
              : name.startsWith("chart-jwt")
                  ? JWT
                  : name.startsWith("chart-full") ? FULL : MANIFESTS;
      String deployment = object(source, "Deployment/sparkgate");
      List<String> mounts =
          new ArrayList<>(
              List.of(
                  deployment
                      .substring(deployment.indexOf("mounts=") + 7)
                      .split(" ")[0]
                      .split(",")));
      mounts.add("/etc/sparkgate/policies"); // the shipped policies, in the image
      for (String path : filePaths(config, new ArrayList<>())) {
        assertTrue(
            mounts.stream().anyMatch(m -> path.startsWith(m + "/")),
            name + ": " + path + " is on no volume the pod mounts (" + mounts + ")");
      }
    }
    Map<String, Object> full = configs.get("chart-full-sparkgate.yaml");
    assertNull(full.get("backend"), "pools replace backend");
    assertEquals(List.of("analytics", "lakehouse"), List.copyOf(section(full, "pools").keySet()));
    assertEquals(2, ((List<?>) full.get("routes")).size());
    assertTrue(section(full, "quotas").containsKey("per_principal"));
    assertEquals("/etc/sparkgate/client-ca/ca.crt", section(full, "tls").get("client_ca_file"));
    // The auth values pass through as the proxy's auth section, as given.
    assertEquals(
        Map.of("anonymous", true), configs.get("chart-default-sparkgate.yaml").get("auth"));
    Map<String, Object> jwtAuth = section(configs.get("chart-jwt-sparkgate.yaml"), "auth");
    assertEquals(List.of("jwt"), List.copyOf(jwtAuth.keySet()));
    assertEquals("sparkgate", section(jwtAuth, "jwt").get("audience"));
  }

  @Test
  void chart_rendersNothingUntilAuthenticationIsConfigured_withOneMessageNamingTheValues() {
    List<String> negatives = matching("negative: chart refuses the defaults");
    assertEquals(1, negatives.size(), String.join("\n", lines));
    assertTrue(
        negatives
            .get(0)
            .contains(
                "config.auth: no authentication method: set config.auth.jwt,"
                    + " config.auth.static_tokens or config.auth.client_cert"
                    + " (docs/authentication.md); to let every caller in as user \"anonymous\","
                    + " set config.auth.anonymous: true"),
        negatives.get(0));
    assertTrue(
        matching("negative: chart refuses anonymous: true beside another method").stream()
            .anyMatch(l -> l.contains("write anonymous: fallback")),
        String.join("\n", lines));
  }

  @Test
  void notes_warnExactlyWhenAnonymousAccessIsOn() throws IOException {
    String warning = "WARNING: ANONYMOUS ACCESS IS ON";
    String anonymous = Files.readString(OUT.resolve("install-anonymous.txt"));
    assertTrue(anonymous.contains(warning + " (config.auth.anonymous: true)"), anonymous);
    assertTrue(anonymous.contains("Every caller is let in as user \"anonymous\""), anonymous);
    String fallback = Files.readString(OUT.resolve("install-fallback.txt"));
    assertTrue(fallback.contains(warning + " (config.auth.anonymous: fallback)"), fallback);
    for (String name : List.of("install-jwt.txt", "install-full.txt")) {
      String notes = Files.readString(OUT.resolve(name));
      assertTrue(notes.contains("NOTES:"), name + ":\n" + notes);
      assertFalse(notes.contains(warning), name + ":\n" + notes);
    }
  }

  /**
   * The plain manifest's configuration, read by the proxy's own loader with the files the pod mounts staged
   * under {@code dir}: refused while the example's placeholders are in it, loaded once they are replaced.
   */
  @Test
  void manifestConfiguration_isRefusedUntilItsPlaceholdersAreReplaced(@TempDir Path dir)
      throws IOException {
    String config = null;
    try (var reader = Files.newBufferedReader(Path.of(MANIFESTS))) {
      for (Object doc : new Yaml().loadAll(reader)) {
        if (doc instanceof Map<?, ?> object
            && "ConfigMap".equals(object.get("kind"))
            && object.get("data") instanceof Map<?, ?> data) {
          config = (String) data.get("sparkgate.yaml");
        }
      }
    }
    assertNotNull(config, "no ConfigMap with sparkgate.yaml in " + MANIFESTS);
    for (String file : List.of("tls/tls.crt", "tls/tls.key", "admin/token")) {
      Path path = dir.resolve(file);
      Files.createDirectories(path.getParent());
      Files.writeString(path, "x\n");
      Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-------"));
    }
    Files.createDirectories(dir.resolve("policies"));
    Files.copy(Path.of("policies/shared-server.yaml"), dir.resolve("policies/shared-server.yaml"));
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(file, config.replace("/etc/sparkgate/", dir + "/"));

    String message = assertThrows(ConfigException.class, () -> ProxyConfig.load(file)).getMessage();
    assertTrue(
        message.contains("auth.jwt.jwks_url: still the placeholder REPLACE-ME from the example"),
        message);

    Files.writeString(
        file,
        Files.readString(file)
            .replace("REPLACE-ME.example.com", "idp.example.com")
            .replace("audience: REPLACE-ME", "audience: sparkgate"));
    AuthConfig.Jwt jwt = ProxyConfig.load(file).auth().jwt().orElseThrow();
    assertEquals("https://idp.example.com/realms/spark", jwt.issuer());
    assertEquals(List.of("sparkgate"), jwt.audience());
  }

  @Test
  void checkerAndChart_refuseTheirNegativeCases() {
    List<String> negatives = matching("negative: ");
    assertTrue(
        negatives.stream()
            .anyMatch(
                l ->
                    l.contains("misspelt-field.yaml:3: FAIL")
                        && l.contains(
                            "unknown field \"spec.template.spec.containers[0].readinesProbe\"")),
        String.join("\n", negatives));
    assertTrue(
        negatives.stream()
            .anyMatch(l -> l.contains("duplicate-field.yaml") && l.contains("already set")),
        String.join("\n", negatives));
    assertTrue(
        negatives.stream()
            .anyMatch(
                l ->
                    l.contains("unknown-kind.yaml")
                        && l.contains("no kind \"PodDisruptionBudget\"")),
        String.join("\n", negatives));
    assertTrue(
        negatives.stream()
            .anyMatch(l -> l.contains("undeclared-port.yaml") && l.contains("\"admin\"")),
        String.join("\n", negatives));
    assertTrue(
        negatives.stream()
            .anyMatch(l -> l.contains("two-volume-sources.yaml") && l.contains("has 2 sources")),
        String.join("\n", negatives));
    assertTrue(
        negatives.stream().anyMatch(l -> l.contains("must be more than listen.drain_delay")),
        String.join("\n", negatives));
    assertTrue(
        negatives.stream().anyMatch(l -> l.contains("bound beyond loopback")),
        String.join("\n", negatives));
    assertTrue(
        negatives.stream().anyMatch(l -> l.contains("cannot be bound to loopback")),
        String.join("\n", negatives));
    assertTrue(
        negatives.stream().anyMatch(l -> l.contains("does not mount an admin client CA")),
        String.join("\n", negatives));
  }

  private static List<String> matching(String text) {
    return lines.stream().filter(l -> l.contains(text)).collect(Collectors.toList());
  }

  /** The objects the checker passed from {@code source}, as Kind/name, in the file's order. */
  private static List<String> objects(String source) {
    return lines.stream()
        .filter(l -> l.startsWith(source + ":") && l.contains(": ok "))
        .map(l -> l.substring(l.indexOf(": ok ") + 5).split(" ")[0])
        .collect(Collectors.toList());
  }

  /** The checker's line for one object: its summary after "ok". */
  private static String object(String source, String kindAndName) {
    return lines.stream()
        .filter(l -> l.startsWith(source + ":") && l.contains(": ok " + kindAndName + " "))
        .map(l -> l.substring(l.indexOf(": ok ") + 5))
        .findFirst()
        .orElseGet(() -> fail(kindAndName + " not rendered from " + source + ":\n" + lines));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> section(Map<String, Object> config, String key) {
    Object value = config.get(key);
    assertTrue(value instanceof Map, key + " is not a section: " + value);
    return (Map<String, Object>) value;
  }

  /** Every path a file key names (file, *_file, *_files, a pool's policy), anywhere in the configuration. */
  private static List<String> filePaths(Object node, List<String> found) {
    if (node instanceof Map<?, ?> map) {
      for (Map.Entry<?, ?> e : map.entrySet()) {
        String key = String.valueOf(e.getKey());
        boolean names = key.equals("file") || key.endsWith("_file") || key.equals("policy");
        if (names && e.getValue() instanceof String s) {
          found.add(s);
        } else if (key.endsWith("_files") && e.getValue() instanceof List<?> list) {
          list.forEach(v -> found.add(String.valueOf(v)));
        } else {
          filePaths(e.getValue(), found);
        }
      }
    } else if (node instanceof List<?> list) {
      list.forEach(v -> filePaths(v, found));
    }
    return found;
  }
}
