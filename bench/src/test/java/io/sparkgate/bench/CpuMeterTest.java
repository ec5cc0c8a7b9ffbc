package io.sparkgate.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The harness's CPU meter tells user time from kernel time (bench/README.md, thirtieth round). */
class CpuMeterTest {
  @Test
  void aLoopInUserSpaceSpendsLittleInTheKernel() throws Exception {
    double share = kernelShareOf("i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done");
    assertTrue(share < 0.3, "a shell loop's kernel share: " + share);
  }

  @Test
  void oneByteReadsAndWritesSpendMostOfTheirTimeInTheKernel() throws Exception {
    double share =
        kernelShareOf("exec dd if=/dev/zero of=/dev/null bs=1 count=3000000 2>/dev/null");
    // Not "above 0.6": on a 6.18 kernel with page-table isolation dd spent 55-60% in the kernel
    // (time(1) agreed),
    // as the user-side half of each system call's entry and exit counts as user time. A loop spends
    // under 1%.
    assertTrue(share > 0.4, "dd's kernel share at one byte per system call: " + share);
  }

  /**
   * Runs the command in a shell that waits a moment first, so that the meter starts before the work; the work
   * runs in the shell itself or replaces it (exec): the meter counts the live processes only.
   */
  private static double kernelShareOf(String work) throws Exception {
    assumeTrue(Files.isReadable(Path.of("/proc/self/stat")), "needs Linux's /proc");
    Process p = new ProcessBuilder("sh", "-c", "sleep 0.2; " + work).start();
    CpuMeter meter = CpuMeter.start(p);
    double share = Double.NaN;
    while (p.isAlive()) {
      double now =
          meter.kernelShare(); // read while it runs: once it has exited, /proc has nothing to read
      share = Double.isNaN(now) ? share : now;
      Thread.sleep(50);
    }
    assertTrue(!Double.isNaN(share), "no CPU measured");
    return share;
  }
}
