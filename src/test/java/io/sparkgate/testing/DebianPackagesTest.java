package io.sparkgate.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

final class DebianPackagesTest {
  @Test
  void found_returnedWhereverItRuns() {
    assertEquals("/usr/bin/x", DebianPackages.require("x", "a test", () -> "/usr/bin/x", true));
    assertEquals("/usr/bin/x", DebianPackages.require("x", "a test", () -> "/usr/bin/x", false));
  }

  @Test
  void missing_skippedWithTheReason_failedUnderCi() {
    TestAbortedException skipped =
        assertThrows(
            TestAbortedException.class,
            () -> DebianPackages.require("prometheus", "the scraper", () -> null, false));
    assertTrue(
        skipped
            .getMessage()
            .contains(
                "Debian package prometheus (the scraper) is not installed; "
                    + ".ci/setup installs it"),
        skipped.getMessage());
    AssertionFailedError failed =
        assertThrows(
            AssertionFailedError.class,
            () -> DebianPackages.require("prometheus", "the scraper", () -> null, true));
    assertTrue(
        failed.getMessage().contains(".ci/setup installs it")
            && failed.getMessage().contains("SPARKGATE_CI=1"),
        failed.getMessage());
  }

  @Test
  void firstWorking_skipsWhatIsMissingOrFails() {
    assertEquals(
        "true",
        DebianPackages.firstWorking(List.of("/nonexistent/sparkgate-probe", "false", "true")));
    assertNull(DebianPackages.firstWorking(List.of("/nonexistent/sparkgate-probe", "false")));
  }
}
