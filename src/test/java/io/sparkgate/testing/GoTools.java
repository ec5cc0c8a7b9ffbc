package io.sparkgate.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Real servers the end-to-end tests build from their Go modules with the machine's Go toolchain (OPA,
 * Jaeger), as {@code deploy/check/run.sh} builds helm: once into {@code target/tools/bin}
 * ({@code SPARKGATE_TOOLS} moves it), with a stamp file naming the version built, so a version change
 * rebuilds. The first build on a machine without Go's caches takes minutes; later ones take none.
 */
public final class GoTools {
  private GoTools() {}

  /**
   * The path of {@code name} built from {@code pkg} at {@code version} ({@code go install pkg@version}),
   * building it first when it is missing or another version. Without Go the test is skipped (failed under
   * CI, see {@link Toolchains}).
   *
   * @param pkg the Go package of the command, e.g. {@code github.com/open-policy-agent/opa}
   */
  public static Path install(String name, String pkg, String version) throws IOException {
    String go = Toolchains.requireGo("to build " + name + " (" + pkg + ")");
    Path bin = bin();
    Path tool = bin.resolve(name);
    Path stamp = bin.resolve(name + ".version");
    String wanted = pkg + "@" + version;
    if (Files.isExecutable(tool)
        && Files.exists(stamp)
        && Files.readString(stamp).strip().equals(wanted)) {
      return tool;
    }
    synchronized (GoTools.class) {
      Files.createDirectories(bin);
      Path log = bin.resolve(name + ".build.log");
      ProcessBuilder builder =
          new ProcessBuilder(go, "install", wanted)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile());
      builder.environment().put("GOBIN", bin.toAbsolutePath().toString());
      Path goDir = Path.of(go).getParent();
      if (goDir != null) {
        builder
            .environment()
            .merge("PATH", goDir.toString(), (path, dir) -> dir + File.pathSeparator + path);
      }
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
      assertTrue(finished, "go install " + wanted + " did not finish in 30 minutes:\n" + tail);
      assertEquals(0, build.exitValue(), "go install " + wanted + " failed:\n" + tail);
      Files.writeString(stamp, wanted + "\n");
    }
    return tool;
  }

  private static Path bin() {
    String dir = System.getenv("SPARKGATE_TOOLS");
    return (dir == null ? Path.of("target", "tools") : Path.of(dir)).resolve("bin");
  }
}
