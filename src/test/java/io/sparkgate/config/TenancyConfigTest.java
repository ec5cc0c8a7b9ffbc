package io.sparkgate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The multi-tenant sections: pools, routes, sessions, health, quotas. */
final class TenancyConfigTest {
  @TempDir Path dir;

  private static final String HEAD =
      "listen: {plaintext: true, address: 127.0.0.1}\nauth: {anonymous: true}\n";

  private Path write(String yaml) throws IOException {
    Files.writeString(dir.resolve("lake.yaml"), "rules: []\n");
    Files.writeString(dir.resolve("shared.yaml"), "rules: []\n");
    Files.writeString(dir.resolve("redis.pass"), "s3cret\n");
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(file, yaml);
    return file;
  }

  private String error(String yaml) throws IOException {
    Path file = write(yaml);
    return assertThrows(ConfigException.class, () -> ProxyConfig.load(file)).getMessage();
  }

  @Test
  void theIssuesExample_reads() throws IOException {
    ProxyConfig c =
        ProxyConfig.load(
            write(
                HEAD
                    + "pools:\n"
                    + "  analytics:\n"
                    + "    backends: [spark-a:15002, {address: 'spark-b:15002'}]\n"
                    + "  lakehouse:\n"
                    + "    backends: [spark-lake:15002]\n"
                    + "    policy: lake.yaml\n"
                    + "routes:\n"
                    + "  - match: {groups: ['lake-*']}\n"
                    + "    pool: lakehouse\n"
                    + "  - pool: analytics\n"
                    + "sessions:\n"
                    + "  store: redis\n"
                    + "  redis_url: redis://127.0.0.1:6379/0\n"
                    + "  redis_password_file: redis.pass\n"
                    + "  idle_timeout: 2h\n"
                    + "health: {interval: 2s}\n"
                    + "policy: {file: shared.yaml}\n"
                    + "quotas:\n"
                    + "  per_principal: {concurrent_operations: 8, requests_per_second: 50, burst: 100,"
                    + " max_plan_bytes: 16MiB}\n"
                    + "  per_tenant: {concurrent_operations: 64, requests_per_second: 500, burst: 1000}\n"
                    + "  overrides:\n"
                    + "    - match: {groups: [etl]}\n"
                    + "      per_principal: {concurrent_operations: 32}\n"));
    assertEquals(List.of("analytics", "lakehouse"), List.copyOf(c.pools().keySet()));
    assertEquals(
        List.of("spark-a:15002", "spark-b:15002"),
        c.pool("analytics").backends().stream().map(BackendConfig::address).toList());
    assertEquals(dir.resolve("lake.yaml"), c.policyOf("lakehouse").orElseThrow());
    assertEquals(dir.resolve("shared.yaml"), c.policyOf("analytics").orElseThrow());
    assertEquals(List.of("lake-*"), c.routes().get(0).match().groups());
    assertTrue(c.routes().get(1).match().anyone());
    assertEquals(SessionsConfig.Store.REDIS, c.sessions().store());
    assertEquals(URI.create("redis://127.0.0.1:6379/0"), c.sessions().redisUrl().orElseThrow());
    assertEquals("s3cret", c.sessions().redisPassword().orElseThrow().reveal());
    assertEquals(Duration.ofHours(2), c.sessions().idleTimeout());
    assertEquals(Duration.ofSeconds(2), c.health().interval());
    assertEquals(OptionalInt.of(8), c.quotas().perPrincipal().concurrentOperations());
    assertEquals(16L << 20, c.quotas().perPrincipal().maxPlanBytes().getAsLong());
    assertEquals(
        OptionalInt.of(32),
        c.quotas()
            .perPrincipal()
            .with(c.quotas().overrides().get(0).perPrincipal())
            .concurrentOperations());
    assertEquals(
        OptionalInt.of(50),
        c.quotas()
            .perPrincipal()
            .with(c.quotas().overrides().get(0).perPrincipal())
            .requestsPerSecond());
  }

  @Test
  void shippedMultiTenantExample_isValid() throws IOException {
    // The example's TLS files are the dev set; make them where it looks for them.
    Path root = dir.resolve("repo");
    Path examples = root.resolve("proxy/examples");
    Files.createDirectories(examples);
    Files.createDirectories(root.resolve("certs/dev"));
    Files.createDirectories(root.resolve("policies"));
    Files.writeString(root.resolve("certs/dev/server.pem"), "cert");
    Files.writeString(root.resolve("certs/dev/server.key"), "key");
    Files.setPosixFilePermissions(
        root.resolve("certs/dev/server.key"),
        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    for (String policy : List.of("shared-server.yaml", "mixed-lakehouse.yaml", "team-data.yaml")) {
      Files.copy(Path.of("policies", policy), root.resolve("policies").resolve(policy));
    }
    Path file = examples.resolve("multi-tenant.yaml");
    Files.copy(Path.of("proxy/examples/multi-tenant.yaml"), file);
    String text = Files.readString(file).replace("/etc/sparkgate/lake-token", "lake-token");
    Files.writeString(file, text);
    Files.writeString(examples.resolve("lake-token"), "t0ken\n");
    ProxyConfig c = ProxyConfig.load(file);
    assertEquals(List.of("analytics", "lakehouse"), List.copyOf(c.pools().keySet()));
    assertEquals(3, c.routes().size());
    assertEquals(SessionsConfig.Store.REDIS, c.sessions().store());
    assertTrue(c.policyOf("lakehouse").orElseThrow().endsWith("mixed-lakehouse.yaml"));
    assertTrue(c.policyOf("analytics").orElseThrow().endsWith("team-data.yaml"));
  }

  @Test
  void backendAlone_isThePoolDefault_routedToEveryone() throws IOException {
    ProxyConfig c = ProxyConfig.load(write(HEAD + "backend: {address: 'localhost:15002'}\n"));
    assertEquals(List.of(PoolConfig.DEFAULT), List.copyOf(c.pools().keySet()));
    assertEquals(1, c.routes().size());
    assertTrue(c.routes().get(0).match().anyone());
    assertEquals(SessionsConfig.Store.MEMORY, c.sessions().store());
  }

  @Test
  void mistakes_explainedPrecisely() throws IOException {
    String pools = "pools:\n  a: {backends: ['h:1']}\n  b: {backends: ['h:2']}\n";
    assertTrue(
        error(HEAD + pools).contains("routes: is required with more than one pool"),
        error(HEAD + pools));
    assertTrue(
        error(HEAD + pools + "routes: [{pool: c}]\n").contains("names no pool (pools: a, b)"));
    assertTrue(
        error(HEAD + pools + "routes: [{pool: a}, {pool: b}]\n")
            .contains("comes after a route without match, which takes everyone"));
    assertTrue(
        error(HEAD + pools + "backend: {address: 'h:3'}\nroutes: [{pool: a}]\n")
            .contains("backend: and pools are both set"));
    assertTrue(
        error(HEAD + "pools:\n  a: {backends: ['h:1', 'h:1']}\n").contains("h:1 is listed twice"));
    assertTrue(
        error(
                HEAD
                    + "pools:\n  a: {backends: ['h:1']}\n  b: {backends: ['h:1']}\nroutes: [{pool: a}]\n")
            .contains("h:1 is listed twice"));
    assertTrue(error(HEAD + "pools:\n  a: {backends: ['nohost']}\n").contains("must be host:port"));
    assertTrue(
        error(HEAD + "pools:\n  A: {backends: ['h:1']}\n").contains("a pool name is lower-case"));
    assertTrue(error(HEAD + "pools:\n  a: {backends: []}\n").contains("backends: is required"));
    assertTrue(
        error(HEAD + "pools:\n  a: {backends: ['h:1']}\nroutes: [{match: {}, pool: a}]\n")
            .contains("match: is empty"));
    assertTrue(
        error(
                HEAD
                    + "pools:\n  a: {backends: ['h:1', {address: 'h:2', profile: {spark_version: 3.5.7}}]}\n")
            .contains("its profile differs from the pool's first backend"));
    String backend = "backend: {address: 'h:1'}\n";
    assertTrue(
        error(HEAD + backend + "sessions: {store: redis}\n").contains("redis_url: is required"));
    assertTrue(
        error(HEAD + backend + "sessions: {store: redis, redis_url: 'http://x'}\n")
            .contains("must start with redis:// or rediss://"));
    assertTrue(
        error(HEAD + backend + "sessions: {store: redis, redis_url: 'redis://u:pw@x:6379'}\n")
            .contains("must not hold a password"));
    assertTrue(
        error(HEAD + backend + "sessions: {redis_url: 'redis://x:6379'}\n")
            .contains("store: is memory, so redis_url"));
    assertTrue(
        error(HEAD + backend + "sessions: {store: disk}\n").contains("must be memory or redis"));
    assertTrue(
        error(HEAD + backend + "quotas: {per_principal: {burst: 5}}\n")
            .contains("burst: needs requests_per_second"));
    assertTrue(
        error(HEAD + backend + "quotas: {overrides: [{match: {groups: [x]}}]}\n")
            .contains("sets no limits"));
    assertTrue(
        error(HEAD + backend + "quotas: {per_tenant: {max_plan_bytes: 1MiB}}\n")
            .contains("unknown key"));
    assertTrue(
        error(
                HEAD
                    + "pools:\n  a: {backends: ['h:1'], policy: lake.yaml}\n  b: {backends: ['h:2']}\n"
                    + "routes: [{pool: a}]\n")
            .contains("a pool without one would check nothing"));
  }
}
