package io.sparkgate.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The harness's cross-core canary: its gate, its samples, and the real probe (bench/README.md, thirty-second round). */
class CoreCanaryTest {
  @TempDir Path work;

  @Test
  void samplesOnlyWhileTheGateIsOpenAndSummarisesAWindow() throws Exception {
    // A stand-in probe that prints a "near" sample every 50 ms while the gate file exists, as xcore.c does.
    Path probe = script("while :; do [ -e \"$1\" ] && echo 'T 00:00:00 rtt_ns_p10=140 rtt_ns_p50=150"
        + " xcopy_ns_per_KiB=14.5 localcopy_ns_per_KiB=12.0'; sleep 0.05; done");
    try (CoreCanary canary = CoreCanary.start(probe, work)) {
      long before = System.nanoTime();
      Thread.sleep(300);
      assertEquals(0, canary.window(before, System.nanoTime()).samples(), "sampled with the gate shut");
      CoreCanary.Window w = openFor(canary, 500);
      long to = System.nanoTime();
      assertTrue(w.samples() >= 3, "samples while open: " + w.samples());
      assertEquals(CoreCanary.Placement.SHARED_CACHE, w.placement());
      assertEquals(14.5, w.crossCopyNsPerKiB());
      Thread.sleep(300);
      assertEquals(0, canary.window(to + TimeUnit.MILLISECONDS.toNanos(100), System.nanoTime()).samples(),
          "sampled after the gate shut");
    }
  }

  @Test
  void aWindowWithoutAPlacementInFourFifthsOfItsSamplesIsMixed() throws Exception {
    Path probe = script("while :; do [ -e \"$1\" ] && echo 'T 0 rtt_ns_p10=1 rtt_ns_p50=150 xcopy_ns_per_KiB=15.0 x'"
        + " && echo 'T 0 rtt_ns_p10=1 rtt_ns_p50=500 xcopy_ns_per_KiB=31.0 x'; sleep 0.05; done");
    try (CoreCanary canary = CoreCanary.start(probe, work)) {
      CoreCanary.Window w = openFor(canary, 500);
      assertTrue(w.samples() >= 4, "samples: " + w.samples());
      assertEquals(CoreCanary.Placement.MIXED, w.placement());
    }
  }

  @Test
  void samplesAreClassifiedByRoundTripAndCopyCost() {
    // Figures seen on this project's VM in each placement (thirty-second round).
    assertEquals(CoreCanary.Placement.SIBLINGS, new CoreCanary.Sample(0, 110, 9.8).placement());
    assertEquals(CoreCanary.Placement.SHARED_CACHE, new CoreCanary.Sample(0, 150, 15.1).placement());
    assertEquals(CoreCanary.Placement.APART, new CoreCanary.Sample(0, 520, 31.4).placement());
  }

  @Test
  void noProbeMeansNoCanary() throws Exception {
    assertNull(CoreCanary.start(work.resolve("missing"), work));
    assertNull(CoreCanary.start(null, work));
  }

  @Test
  void theRealProbeMeasuresBothCores() throws Exception {
    Path source = Path.of("tools/xcore.c"); // the bench module's directory is the tests' working directory
    assumeTrue(Files.exists(source), "bench/tools/xcore.c not found from " + Path.of("").toAbsolutePath());
    assumeTrue(Runtime.getRuntime().availableProcessors() >= 2, "needs two CPUs");
    Path binary = work.resolve("xcore");
    Process gcc;
    try {
      gcc = new ProcessBuilder("gcc", "-O2", "-pthread", "-o", binary.toString(), source.toString())
          .redirectErrorStream(true).start();
    } catch (IOException e) {
      assumeTrue(false, "no gcc: " + e.getMessage());
      return;
    }
    String out = new String(gcc.getInputStream().readAllBytes());
    assertEquals(0, gcc.waitFor(), "gcc: " + out);
    try (CoreCanary canary = CoreCanary.start(binary, work)) {
      canary.sample();
      long from = System.nanoTime();
      CoreCanary.Window w = canary.window(from, System.nanoTime());
      for (int i = 0; i < 100 && w.samples() == 0; i++) { // the first sample comes at once, the next 2 s later
        Thread.sleep(100);
        w = canary.window(from, System.nanoTime());
      }
      assertTrue(w.samples() >= 1, "no sample from the probe in 10 s");
      assertTrue(w.crossCopyNsPerKiB() > 0 && w.crossCopyNsPerKiB() < 10_000, "copy cost " + w.crossCopyNsPerKiB());
      assertTrue(w.placement() != CoreCanary.Placement.MIXED, "one sample has one placement: " + w);
    }
  }

  /** Opens the gate for {@code millis}, then the window from opening to a moment after shutting it. */
  private static CoreCanary.Window openFor(CoreCanary canary, long millis) throws Exception {
    long from = System.nanoTime();
    canary.sample();
    Thread.sleep(millis);
    canary.pause();
    Thread.sleep(100); // a sample already printed may still be read
    return canary.window(from, System.nanoTime());
  }

  private Path script(String body) throws Exception {
    Path p = work.resolve("probe.sh");
    Files.writeString(p, "#!/bin/sh\n" + body + "\n");
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    return p;
  }
}
