package io.sparkgate.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

final class ToolchainsTest {
  private static final List<String> MISSING = List.of("/nonexistent/go");

  @Test
  void found_returnedWhereverItRuns() {
    // "true" stands in for a go that answers "go version".
    assertEquals("true", Toolchains.requireGo("to build", List.of("true"), true));
    assertEquals("true", Toolchains.requireGo("to build", List.of("true"), false));
  }

  @Test
  void missing_skippedWithTheReason_failedUnderCi() {
    TestAbortedException skipped =
        assertThrows(
            TestAbortedException.class,
            () -> Toolchains.requireGo("to build helm", MISSING, false));
    assertTrue(
        skipped
            .getMessage()
            .contains("the Go toolchain (go) is not installed; it is needed to build helm"),
        skipped.getMessage());
    AssertionFailedError failed =
        assertThrows(
            AssertionFailedError.class, () -> Toolchains.requireGo("to build helm", MISSING, true));
    assertTrue(failed.getMessage().contains("SPARKGATE_CI=1"), failed.getMessage());
  }
}
