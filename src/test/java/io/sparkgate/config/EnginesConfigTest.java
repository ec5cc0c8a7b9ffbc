package io.sparkgate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code pools.<name>.engines}: what a pool of engines needs, and each mistake named precisely. */
final class EnginesConfigTest {
  @TempDir Path dir;

  @BeforeEach
  void distribution() throws IOException {
    Path bin = Files.createDirectories(dir.resolve("spark/bin"));
    Files.writeString(bin.resolve("spark-submit"), "#!/bin/sh\n");
    Files.setPosixFilePermissions(
        bin.resolve("spark-submit"), PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.createDirectories(dir.resolve("spark/jars"));
    Files.writeString(dir.resolve("spark/jars/spark-core_2.13-4.0.5.jar"), "");
  }

  private ProxyConfig load(String engines) throws IOException {
    return ProxyConfig.load(write("  personal:", "    engines: {" + engines + "}"));
  }

  /** A configuration with these lines under {@code pools:}. */
  private Path write(String... pool) throws IOException {
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(
        file,
        "listen: {address: 127.0.0.1, port: 0, plaintext: true}\nauth: {anonymous: true}\npools:\n"
            + String.join("\n", pool)
            + "\n");
    return file;
  }

  private String error(String engines) {
    return assertThrows(ConfigException.class, () -> load(engines)).getMessage();
  }

  @Test
  void defaults_andTheProfileTheConfigurationStates() throws IOException {
    PoolConfig pool =
        load("share: user, spark_home: spark, conf: {spark.sql.extensions: 'a.B, c.D',"
                + " spark.sql.catalog.lake: org.x.Cat, spark.sql.catalog.lake.type: hadoop,"
                + " spark.sql.adaptive.enabled: true}")
            .pool("personal");
    EnginesConfig e = pool.engines().orElseThrow();
    assertEquals(EnginesConfig.Share.USER, e.share());
    assertEquals(dir.resolve("spark"), e.sparkHome());
    assertEquals("local[*]", e.master());
    assertEquals(20, e.max());
    assertEquals(0, e.warm());
    assertEquals(Duration.ofMinutes(30), e.idleTimeout());
    assertEquals(Duration.ofMinutes(3), e.startTimeout());
    assertEquals("127.0.0.1", e.bindAddress());
    assertEquals(new EnginesConfig.PortRange(20000, 29999), e.ports());
    assertEquals("true", e.conf().get("spark.sql.adaptive.enabled"));
    assertEquals(List.of(), pool.backends());
    BackendProfileConfig profile = pool.profile();
    assertEquals(Optional.of("4.0.5"), profile.sparkVersion());
    assertEquals(Optional.of(List.of("a.B", "c.D")), profile.extensions());
    assertEquals(Optional.of(Map.of("lake", "org.x.Cat")), profile.catalogs());
  }

  @Test
  void mistakes_areNamed() {
    assertTrue(error("share: team, spark_home: spark").contains("must be user, group or tenant"));
    assertTrue(
        error("share: user, spark_home: nowhere").contains("has no executable bin/spark-submit"));
    assertTrue(
        error("share: user, spark_home: spark, conf: {spark.connect.authenticate.token: x}")
            .contains("is Sparkgate's to set"));
    assertTrue(
        error("share: user, spark_home: spark, conf: {spark.master: yarn}")
            .contains("set by the engines' master"));
    assertTrue(
        error("share: user, spark_home: spark, deploy_mode: cluster").contains("must be client"));
    assertTrue(
        error("share: group, spark_home: spark, proxy_user: true").contains("needs share: user"));
    assertTrue(
        error("share: user, spark_home: spark, proxy_user: true, warm: 1")
            .contains("must be 0 with proxy_user"));
    assertTrue(
        error("share: user, spark_home: spark, warm: 3, max: 2").contains("more than max 2"));
    assertTrue(error("spark_home: spark").contains("share"));
    assertTrue(error("share: user, spark_home: spark, ports: 80-90").contains("within 1024-65535"));
    assertTrue(
        error("share: user, spark_home: spark, ports: 20000-20004, max: 6")
            .contains("fewer than max 6"));
  }

  @Test
  void enginesAndBackends_areOneOrTheOther() throws IOException {
    Path file =
        write(
            "  p:",
            "    backends: ['127.0.0.1:15002']",
            "    engines: {share: user, spark_home: spark}");
    String message = assertThrows(ConfigException.class, () -> ProxyConfig.load(file)).getMessage();
    assertTrue(message.contains("either listed or started by Sparkgate"), message);
  }
}
