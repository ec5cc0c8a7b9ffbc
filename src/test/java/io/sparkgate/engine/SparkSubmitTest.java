package io.sparkgate.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.config.EnginesConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The engine's command line: the pool's settings and Sparkgate's, and never its token. */
final class SparkSubmitTest {
  private static EnginesConfig config(boolean proxyUser, Map<String, String> conf) {
    return new EnginesConfig(
        EnginesConfig.Share.USER,
        Path.of("/opt/spark"),
        "spark://master:7077",
        "client",
        conf,
        proxyUser,
        0,
        5,
        Duration.ofMinutes(30),
        Duration.ofMinutes(3),
        "127.0.0.1",
        Optional.empty(),
        EnginesConfig.PortRange.DEFAULT,
        64,
        Optional.empty());
  }

  private static final Launcher.Spec SPEC =
      new Launcher.Spec(
          "sparkgate-p-user:alice", "127.0.0.1", 20001, "s3cret-token", "alice", Path.of("x.log"));

  @Test
  void command_carriesThePoolsSettingsAndSparkgates_butNotTheToken() {
    List<String> cmd =
        SparkSubmit.command(config(true, Map.of("spark.executor.memory", "2g")), SPEC);
    assertEquals("/opt/spark/bin/spark-submit", cmd.get(0));
    String line = String.join(" ", cmd);
    assertTrue(line.contains("--class " + SparkSubmit.MAIN_CLASS), line);
    assertTrue(line.contains("--name sparkgate-p-user:alice"), line);
    assertTrue(line.contains("--master spark://master:7077 --deploy-mode client"), line);
    assertTrue(line.contains("--proxy-user alice"), line);
    assertTrue(line.contains("--conf spark.executor.memory=2g"), line);
    assertTrue(line.contains("--conf spark.ui.enabled=false"), line);
    assertTrue(line.contains("--conf spark.connect.grpc.binding.address=127.0.0.1"), line);
    assertTrue(line.contains("--conf spark.connect.grpc.binding.port=20001"), line);
    assertTrue(line.contains("--conf spark.connect.grpc.port.maxRetries=0"), line);
    assertEquals("spark-internal", cmd.get(cmd.size() - 1));
    assertFalse(line.contains("s3cret-token"), "the token is in the environment, not on the line");
    assertFalse(line.contains("authenticate"), line);
  }

  @Test
  void command_withoutProxyUser_andTheOperatorsUiSetting() {
    String line =
        String.join(
            " ",
            SparkSubmit.command(
                config(false, Map.of("spark.ui.enabled", "true")),
                new Launcher.Spec("n", "127.0.0.1", 20002, "t", null, Path.of("x.log"))));
    assertFalse(line.contains("--proxy-user"), line);
    assertTrue(line.contains("--conf spark.ui.enabled=true"), line);
    assertFalse(line.contains("spark.ui.enabled=false"), line);
  }
}
