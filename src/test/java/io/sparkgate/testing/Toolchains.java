package io.sparkgate.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * Language toolchains of the machine image that some tests build real tools with (Go, for helm and the
 * Kubernetes schema checker). Like {@link DebianPackages}: when one is missing the test is skipped with the
 * reason, unless {@code SPARKGATE_CI=1}, which makes it a failure.
 */
public final class Toolchains {
  private static final List<String> GO = List.of("go", "/usr/local/go/bin/go");

  private Toolchains() {}

  /**
   * The {@code go} command, found on the {@code PATH} or in {@code /usr/local/go/bin}.
   *
   * @param neededFor what the test builds with it, for the message
   */
  public static String requireGo(String neededFor) {
    return requireGo(neededFor, GO, "1".equals(System.getenv(DebianPackages.CI)));
  }

  static String requireGo(String neededFor, List<String> candidates, boolean underCi) {
    String go = DebianPackages.firstWorking(candidates, "version");
    if (go == null) {
      String why = "the Go toolchain (go) is not installed; it is needed " + neededFor;
      if (underCi) {
        fail(why + ", and " + DebianPackages.CI + "=1 requires it");
      }
      Assumptions.abort(why);
    }
    return go;
  }

  /** Puts the directory of {@code go} (from {@link #requireGo}) first on the PATH of {@code builder}. */
  public static void putOnPath(ProcessBuilder builder, String go) {
    java.nio.file.Path dir = java.nio.file.Path.of(go).getParent();
    if (dir != null) {
      builder
          .environment()
          .merge("PATH", dir.toString(), (path, d) -> d + java.io.File.pathSeparator + path);
    }
  }
}
