package io.sparkgate.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Real servers the end-to-end tests build from their Go modules with the machine's Go toolchain (OPA,
 * Jaeger, as {@code src/test/tools/go-tools.txt} lists them) through {@code src/test/tools/go-tool.sh}: once into {@code target/tools/bin} ({@code
 * SPARKGATE_TOOLS} moves it), with a stamp file naming the version built. The script's lock makes a test wait
 * for the build {@code .ci/run} started in the background. The first build on a machine without Go's caches
 * takes minutes; later ones take none.
 */
public final class GoTools {
  private static final String SCRIPT = "src/test/tools/go-tool.sh";

  private GoTools() {}

  /**
   * The path of the tool {@code src/test/tools/go-tools.txt} lists as {@code name}, built first when it is
   * missing or another version. Without Go the test is skipped (failed under CI, see {@link Toolchains}).
   */
  public static Path install(String name) throws IOException {
    return build(name);
  }

  private static Path build(String name) throws IOException {
    String go = Toolchains.requireGo("to build " + name);
    Path bin = bin();
    Files.createDirectories(bin);
    Path log = bin.resolve(name + ".build.log");
    ProcessBuilder builder =
        new ProcessBuilder("bash", SCRIPT, name)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    Toolchains.putOnPath(builder, go);
    Process build = builder.start();
    boolean finished;
    try {
      finished = build.waitFor(30, TimeUnit.MINUTES);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      build.destroyForcibly();
      throw new IOException("interrupted while building " + name, e);
    }
    if (!finished) build.destroyForcibly();
    List<String> lines = Files.readAllLines(log);
    String tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    assertTrue(finished, SCRIPT + " did not build " + name + " in 30 minutes:\n" + tail);
    assertEquals(0, build.exitValue(), SCRIPT + " failed to build " + name + ":\n" + tail);
    Path tool = bin.resolve(name);
    assertTrue(Files.isExecutable(tool), SCRIPT + " left no " + tool);
    return tool;
  }

  private static Path bin() {
    String dir = System.getenv("SPARKGATE_TOOLS");
    return (dir == null ? Path.of("target", "tools") : Path.of(dir)).resolve("bin");
  }
}
