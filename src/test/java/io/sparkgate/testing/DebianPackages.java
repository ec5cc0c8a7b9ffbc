package io.sparkgate.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;

/**
 * Real servers and clients from Debian packages for the end-to-end tests. The tests only look for them:
 * {@code .ci/setup} installs them (as root), and {@code .ci/run} calls it. When one is missing the test is
 * skipped with the reason, unless {@code SPARKGATE_CI=1} ({@code .ci/run} sets it), which makes it a failure.
 */
public final class DebianPackages {
  /** Set to {@code 1} by {@code .ci/run}: there, a package a test needs is part of the build, not optional. */
  static final String CI = "SPARKGATE_CI";

  private DebianPackages() {}

  /**
   * What {@code found} returns; when it returns null, the test fails under CI and is skipped elsewhere.
   *
   * @param pkg the Debian package that provides it
   * @param neededFor what the test uses it for, for the message
   */
  public static <T> T require(String pkg, String neededFor, Supplier<T> found) {
    return require(pkg, neededFor, found, "1".equals(System.getenv(CI)));
  }

  static <T> T require(String pkg, String neededFor, Supplier<T> found, boolean underCi) {
    T result = found.get();
    if (result == null) {
      String why =
          "Debian package "
              + pkg
              + " ("
              + neededFor
              + ") is not installed; .ci/setup installs it"
              + " (as root; .ci/run calls it)";
      if (underCi) {
        fail(why + ", and " + CI + "=1 requires it");
      }
      Assumptions.abort(why);
    }
    return result;
  }

  /** The first of {@code candidates} that runs {@code args} with exit status 0, or null. */
  public static String firstWorking(List<String> candidates, String... args) {
    for (String candidate : candidates) {
      List<String> command = new ArrayList<>(List.of(candidate));
      command.addAll(List.of(args));
      try {
        Process p =
            new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
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
}
