package io.sparkgate.compat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Python virtual environments for the PySpark clients (and the wheel servers' jars), one per requirement
 * under {@code ~/.cache/sparkgate/compat-venv/<name>} (or {@code -Dsparkgate.compat.venvDir}), created with
 * the machine's {@code python3 -m venv} and reused while their marker file still names the same requirement
 * and interpreter. They live beside the Maven and Go caches, not under {@code target/}: five of them are
 * about 4 GB and take minutes each to install even from pip's cache, which a fresh clone (CI's) would pay
 * on every run. Delete the directory to rebuild them.
 */
final class PythonEnvs {
  static final Path ROOT =
      Path.of(
          System.getProperty(
              "sparkgate.compat.venvDir",
              Path.of(System.getProperty("user.home"), ".cache", "sparkgate", "compat-venv")
                  .toString()));

  /** Written last, so an install cut short is redone rather than reused half-done. */
  private static final String MARKER = ".sparkgate-requirement";

  private static final Duration VENV_TIMEOUT = Duration.ofMinutes(2);
  private static final Duration INSTALL_TIMEOUT = Duration.ofMinutes(20);

  /** The interpreters tried, in order; the Debian one needs python3-venv (ensurepip), which .ci/setup installs. */
  private static final List<String> PYTHONS = List.of("python3", "/usr/bin/python3");

  private static volatile Optional<String> python;

  private PythonEnvs() {}

  /**
   * One environment: a name (its directory) and the pip requirements installed into it.
   *
   * @param installTime how long creating it took; zero when an existing one was reused
   */
  record Env(String name, List<String> requirements, Path dir, Duration installTime) {
    Path python() {
      return dir.resolve("bin").resolve("python");
    }

    /** Where pip put the packages: {@code lib/python3.X/site-packages}. */
    Path sitePackages() throws IOException {
      try (Stream<Path> libs = Files.list(dir.resolve("lib"))) {
        return libs.map(lib -> lib.resolve("site-packages"))
            .filter(Files::isDirectory)
            .findFirst()
            .orElseThrow(() -> new IOException("no site-packages under " + dir.resolve("lib")));
      }
    }

    long sizeBytes() throws IOException {
      try (Stream<Path> files = Files.walk(dir)) {
        return files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
      }
    }
  }

  /**
   * Empty when this machine can create virtual environments; otherwise why not. Checked once per JVM.
   */
  static Optional<String> unavailable() {
    return findPython().isPresent()
        ? Optional.empty()
        : Optional.of(
            "no python3 with the venv and ensurepip modules (tried "
                + PYTHONS
                + "); Debian package python3-venv, which .ci/setup installs");
  }

  /**
   * The environment {@code name} with exactly {@code requirements} installed: reused when its marker matches,
   * otherwise created afresh (an old one of the same name is removed first).
   */
  static synchronized Env get(String name, List<String> requirements)
      throws IOException, InterruptedException {
    if (!name.matches("[A-Za-z0-9._-]+")) {
      throw new IllegalArgumentException(
          "environment name must be a plain directory name: " + name);
    }
    if (requirements.isEmpty()) {
      throw new IllegalArgumentException("environment " + name + " needs at least one requirement");
    }
    String python =
        findPython()
            .orElseThrow(() -> new IllegalStateException(unavailable().orElse("no python3")));
    Path dir = ROOT.resolve(name).toAbsolutePath();
    String marker = markerText(python, requirements);
    Path markerFile = dir.resolve(MARKER);
    if (Files.isRegularFile(markerFile)
        && Files.readString(markerFile, StandardCharsets.UTF_8).equals(marker)) {
      return new Env(name, List.copyOf(requirements), dir, Duration.ZERO);
    }
    long started = System.nanoTime();
    deleteTree(dir);
    Files.createDirectories(dir.getParent());
    Path log = dir.resolveSibling(name + ".install.log");
    run(
        List.of(python, "-m", "venv", dir.toString()),
        log,
        VENV_TIMEOUT,
        "python3 -m venv " + name);
    List<String> pip = new ArrayList<>(List.of(dir.resolve("bin/python").toString(), "-m", "pip"));
    pip.addAll(
        List.of("install", "--disable-pip-version-check", "--no-input", "--progress-bar", "off"));
    pip.addAll(requirements);
    run(pip, log, INSTALL_TIMEOUT, "pip install " + String.join(" ", requirements));
    Files.writeString(markerFile, marker, StandardCharsets.UTF_8);
    return new Env(
        name, List.copyOf(requirements), dir, Duration.ofNanos(System.nanoTime() - started));
  }

  private static String markerText(String python, List<String> requirements)
      throws IOException, InterruptedException {
    // The interpreter's exact version too: a venv made by another python3 has dangling symlinks.
    String version = output(List.of(python, "-c", "import sys; print(sys.version)")).strip();
    return String.join("\n", requirements) + "\npython " + version + "\n";
  }

  private static Optional<String> findPython() {
    Optional<String> found = python;
    if (found == null) {
      found = Optional.empty();
      for (String candidate : PYTHONS) {
        try {
          // venv alone is not enough: Debian's python3 has it but cannot bootstrap pip without
          // ensurepip.
          output(List.of(candidate, "-c", "import venv, ensurepip"));
          found = Optional.of(candidate);
          break;
        } catch (IOException | IllegalStateException e) {
          // not there, or without venv: try the next
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return Optional.empty();
        }
      }
      python = found;
    }
    return found;
  }

  private static String output(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IllegalStateException(
          String.join(" ", command) + " failed: " + new String(out, StandardCharsets.UTF_8));
    }
    return new String(out, StandardCharsets.UTF_8);
  }

  private static void run(List<String> command, Path log, Duration timeout, String what)
      throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(what + " did not finish in " + timeout + "; log " + log);
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          what + " failed with exit code " + p.exitValue() + "; log " + log + ":\n" + tail(log));
    }
  }

  private static String tail(Path log) throws IOException {
    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
