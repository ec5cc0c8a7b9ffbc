package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;

/**
 * Real servers and clients from Debian packages for the end-to-end tests. When what a test needs is missing it
 * is installed with apt-get if the tests run as root; otherwise the test is skipped, unless the environment
 * variable the test names is {@code 1} ({@code .ci/run} sets them), which makes it a failure.
 */
final class DebianPackages {
  private static final String APT_GET = "/usr/bin/apt-get";

  private DebianPackages() {}

  /**
   * What {@code found} returns (non-null), installing {@code pkg} first if it returns null.
   *
   * @param requiredBy environment variable that turns a skip into a failure
   */
  static <T> T ensure(String pkg, String requiredBy, Supplier<T> found) throws IOException, InterruptedException {
    T result = found.get();
    if (result == null && isRoot() && Files.isExecutable(Path.of(APT_GET))) {
      // A fresh machine may have no package lists yet: update once if the first attempt fails.
      if (!apt("install", "-y", "-q", "--no-install-recommends", pkg)) {
        apt("update", "-q");
        apt("install", "-y", "-q", "--no-install-recommends", pkg);
      }
      result = found.get();
    }
    if (result == null) {
      String why = pkg + " is not installed and cannot be installed here (Debian: apt-get install " + pkg + ")";
      if ("1".equals(System.getenv(requiredBy))) {
        fail(why + "; " + requiredBy + "=1 requires it");
      }
      Assumptions.abort(why);
    }
    return result;
  }

  /** The first of {@code candidates} that runs {@code args} with exit status 0, or null. */
  static String firstWorking(List<String> candidates, String... args) {
    for (String candidate : candidates) {
      List<String> command = new ArrayList<>(List.of(candidate));
      command.addAll(List.of(args));
      try {
        Process p = new ProcessBuilder(command)
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0) {
          return candidate;
        }
        p.destroyForcibly();
      } catch (IOException e) {
        // not installed: try the next
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    }
    return null;
  }

  private static boolean apt(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(APT_GET));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command)
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
    pb.environment().put("DEBIAN_FRONTEND", "noninteractive");
    Process p = pb.start();
    if (!p.waitFor(600, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return false;
    }
    return p.exitValue() == 0;
  }

  private static boolean isRoot() {
    return "root".equals(System.getProperty("user.name"));
  }
}
