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
    String wanted = pkg + "@" + version;
    return build(go, name, wanted, bin, List.of(List.of(go, "install", wanted)));
  }

  /**
   * As {@link #install}, for a command whose module has {@code replace} directives, which {@code go install
   * pkg@version} refuses (Jaeger): built inside a module of its own, {@code target/tools/src/<name>}, that
   * requires it as a tool ({@code go get -tool}), so the replacements of the module's own go.mod apply.
   *
   * @param module the Go module that holds {@code pkg}, e.g. {@code github.com/jaegertracing/jaeger}
   * @param pkg the command's package in it, e.g. {@code github.com/jaegertracing/jaeger/cmd/jaeger}
   */
  public static Path installInModule(String name, String module, String pkg, String version)
      throws IOException {
    String go = Toolchains.requireGo("to build " + name + " (" + pkg + ")");
    Path bin = bin();
    Path src = bin.resolveSibling("src").resolve(name);
    Files.createDirectories(src);
    Files.writeString(src.resolve("go.mod"), "module sparkgate.test/tools/" + name + "\n");
    Files.deleteIfExists(src.resolve("go.sum"));
    return build(
        go,
        name,
        pkg + "@" + version,
        bin,
        List.of(
            List.of("-C", src.toString(), go, "get", "-tool", pkg + "@" + version),
            List.of(
                "-C",
                src.toString(),
                go,
                "build",
                "-o",
                bin.resolve(name).toAbsolutePath().toString(),
                pkg)));
  }

  /**
   * Runs {@code commands} in turn (each optionally led by {@code -C dir}, the directory it runs in) unless
   * {@code bin/name} is there with a stamp naming {@code wanted}; one log for them all.
   */
  private static Path build(
      String go, String name, String wanted, Path bin, List<List<String>> commands)
      throws IOException {
    Path tool = bin.resolve(name);
    Path stamp = bin.resolve(name + ".version");
    if (Files.isExecutable(tool)
        && Files.exists(stamp)
        && Files.readString(stamp).strip().equals(wanted)) {
      return tool;
    }
    synchronized (GoTools.class) {
      Files.createDirectories(bin);
      Path log = bin.resolve(name + ".build.log");
      Files.deleteIfExists(log);
      for (List<String> command : commands) {
        File dir = null;
        List<String> argv = command;
        if (command.get(0).equals("-C")) {
          dir = new File(command.get(1));
          argv = command.subList(2, command.size());
        }
        ProcessBuilder builder =
            new ProcessBuilder(argv)
                .directory(dir)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        builder.environment().put("GOBIN", bin.toAbsolutePath().toString());
        Path goDir = Path.of(go).getParent();
        if (goDir != null) {
          builder
              .environment()
              .merge("PATH", goDir.toString(), (path, d) -> d + File.pathSeparator + path);
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
        String tail =
            String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        String what = String.join(" ", argv.subList(1, argv.size()));
        assertTrue(finished, "go " + what + " did not finish in 30 minutes:\n" + tail);
        assertEquals(0, build.exitValue(), "go " + what + " failed:\n" + tail);
      }
      Files.writeString(stamp, wanted + "\n");
    }
    return tool;
  }

  private static Path bin() {
    String dir = System.getenv("SPARKGATE_TOOLS");
    return (dir == null ? Path.of("target", "tools") : Path.of(dir)).resolve("bin");
  }
}
