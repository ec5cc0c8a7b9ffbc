package io.sparkgate.bench;

import java.time.Duration;
import java.util.stream.Stream;

/**
 * CPU time an endpoint's processes (nginx's master and workers, a proxy JVM) spend while a scenario runs.
 * Latency on a shared 2-core machine moves with whatever else runs; the CPU a proxy burns per call or per
 * gigabyte barely does, so it shows whether a change made the proxy cheaper even when latency is noisy.
 */
final class CpuMeter {
  private final ProcessHandle process;
  private final long startCpuNanos;
  private final long startWallNanos;

  private CpuMeter(ProcessHandle process) {
    this.process = process;
    this.startCpuNanos = cpuNanos(process);
    this.startWallNanos = System.nanoTime();
  }

  static CpuMeter start(Process process) {
    return new CpuMeter(process.toHandle());
  }

  /** CPU seconds the processes used since start. */
  double cpuSeconds() {
    return (cpuNanos(process) - startCpuNanos) / 1e9;
  }

  /** Cores used on average since start: 1.0 = one core busy all the time. */
  double coresUsed() {
    long wall = System.nanoTime() - startWallNanos;
    return wall == 0 ? 0 : (double) (cpuNanos(process) - startCpuNanos) / wall;
  }

  private static long cpuNanos(ProcessHandle p) {
    return Stream.concat(Stream.of(p), p.descendants())
        .mapToLong(h -> h.info().totalCpuDuration().map(Duration::toNanos).orElse(0L))
        .sum();
  }
}
