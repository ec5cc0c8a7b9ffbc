package io.sparkgate.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
  private final long[] startTicks;

  private CpuMeter(ProcessHandle process) {
    this.process = process;
    this.startCpuNanos = cpuNanos(process);
    this.startWallNanos = System.nanoTime();
    this.startTicks = userAndKernelTicks(process);
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

  /**
   * The share of the CPU since start spent in the kernel (0 to 1), or NaN where {@code /proc} cannot say. The
   * same work can cost more CPU in one process than in an identical one (bench/README.md, thirtieth round);
   * this says on which side of the system-call boundary the extra time is.
   */
  double kernelShare() {
    long[] now = userAndKernelTicks(process);
    if (startTicks == null || now == null) {
      return Double.NaN;
    }
    long user = now[0] - startTicks[0];
    long kernel = now[1] - startTicks[1];
    return user + kernel <= 0 ? Double.NaN : (double) kernel / (user + kernel);
  }

  /** The process and its children (nginx's workers), as every figure here counts them. */
  private static Stream<ProcessHandle> withDescendants(ProcessHandle p) {
    return Stream.concat(Stream.of(p), p.descendants());
  }

  /** Clock ticks in user and kernel mode of the processes, from /proc/<pid>/stat; null if unreadable. */
  private static long[] userAndKernelTicks(ProcessHandle p) {
    long[] ticks = new long[2];
    for (ProcessHandle h : withDescendants(p).toList()) {
      try {
        String stat = Files.readString(Path.of("/proc", Long.toString(h.pid()), "stat"));
        // After the command name, which may hold spaces and parentheses: state is field 3, utime
        // 14, stime 15.
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        ticks[0] += Long.parseLong(f[11]);
        ticks[1] += Long.parseLong(f[12]);
      } catch (IOException | RuntimeException e) {
        if (h.equals(p)) {
          return null; // not Linux, or the process is gone; a descendant may end between listing
          // and reading
        }
      }
    }
    return ticks;
  }

  private static long cpuNanos(ProcessHandle p) {
    return withDescendants(p)
        .mapToLong(h -> h.info().totalCpuDuration().map(Duration::toNanos).orElse(0L))
        .sum();
  }
}
