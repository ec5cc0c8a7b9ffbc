package io.sparkgate.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.testing.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Pool members DNS names: joining, leaving, and never two pools' at once. */
final class DiscoveredBackendsTest {
  @TempDir Path dir;
  private final ManagedChannel nowhere = Channels.plaintext(1).build();
  private Router router;

  @AfterEach
  void stop() {
    if (router != null) router.close();
    nowhere.shutdownNow();
  }

  private Router start() throws Exception {
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(
        file,
        String.join(
            "\n",
            "listen: {plaintext: true, address: 127.0.0.1, port: 0}",
            "pools:",
            "  listed:",
            "    backends: ['127.0.0.1:1']",
            "  found:",
            "    backends:",
            "      - {dns: 'spark.test:2', servers: ['127.0.0.1:9']}",
            "routes:",
            "  - {match: {authority: ['listed.*']}, pool: listed}",
            "  - pool: found",
            "health: {interval: 10m}",
            "auth: {anonymous: true}",
            ""));
    router = Router.start(ProxyConfig.load(file), a -> nowhere, a -> {}, null);
    return router;
  }

  @Test
  void addressesJoinAndLeave_andOneOfAnotherPoolIsLeftOut() throws Exception {
    Router r = start();
    r.explainEmpty("found", () -> "dns spark.test:2: no answer yet");
    assertEquals(List.of(), r.members("found"));
    assertTrue(
        r.poolsWithoutBackend()
            .orElseThrow()
            .contains("found ([]; dns spark.test:2: no answer yet)"),
        r.poolsWithoutBackend().toString());

    assertEquals(
        Set.of(), r.discovered("found", Set.of("10.0.0.2:2", "127.0.0.1:1", "10.0.0.1:2")));
    assertEquals(
        List.of("10.0.0.1:2", "10.0.0.2:2"), r.members("found"), "listed's backend left out");
    assertEquals(
        Map.of("10.0.0.1:2", "unknown", "10.0.0.2:2", "unknown"), r.backendsByPool().get("found"));
    assertEquals(List.of("127.0.0.1:1"), r.members("listed"));

    assertEquals(Set.of("10.0.0.1:2"), r.discovered("found", Set.of("10.0.0.2:2", "10.0.0.3:2")));
    assertEquals(List.of("10.0.0.2:2", "10.0.0.3:2"), r.members("found"));
    assertTrue(!r.backendStates().containsKey("10.0.0.1:2"), "health forgets the one that left");
    assertTrue(r.backendStates().containsKey("10.0.0.3:2"), "and watches the one that joined");
  }
}
