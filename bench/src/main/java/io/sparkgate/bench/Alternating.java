package io.sparkgate.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * Closed-loop latency, one caller, with the endpoints taking turns in short slices: every endpoint runs for a
 * slice, then the next, for many cycles. The 10 s rounds of the closed-loop scenario were too coarse for the
 * 2-core VMs this bench runs on. Their host noise moves in bursts of seconds to minutes (direct's p50 ranged
 * over 171-456 us between the rounds of one run), so one endpoint's round could fall in a burst and another's
 * outside it. Slices of a couple of seconds put every endpoint of a cycle within about ten seconds of the
 * others. The per-cycle differences then cancel most of the drift, and forty of them give a confidence
 * interval ({@link Paired#confidence95()}) narrow enough to tell a 10 us gap from noise.
 *
 * <p>Each endpoint keeps one connection for the whole scenario. Each slice starts with a short unrecorded
 * settle, which refills the caches another endpoint's processes emptied. The cycle order rotates, so that no
 * endpoint always follows the same one.
 */
final class Alternating {
  /**
   * One endpoint's figures: all its measured calls as one distribution, and each slice's p50, p99 and CPU per
   * call (of the endpoint's processes; for direct, the backend's), in cycle order; NaN for a slice in which
   * no call succeeded.
   */
  record Result(LoadGenerator.Latency latency, double callsPerSecond, long errors, List<Double> sliceP50,
      List<Double> sliceP99, List<Double> sliceCpuPerCall) {}

  private Alternating() {}

  /**
   * Runs {@code cycles} cycles over {@code targets}, each endpoint for {@code settle} unrecorded and then
   * {@code slice} measured per cycle; {@code processes} are measured for CPU.
   */
  static Map<String, Result> run(Map<String, LoadGenerator.Target> targets, Map<String, Process> processes,
      int cycles, Duration slice, Duration settle, Consumer<String> log) throws InterruptedException {
    if (cycles < 1 || slice.isZero() || slice.isNegative()) {
      throw new IllegalArgumentException("alternating needs at least one cycle and a positive slice");
    }
    List<String> names = new ArrayList<>(targets.keySet());
    Map<String, LoadGenerator.Caller> callers = new LinkedHashMap<>();
    Map<String, Histogram> all = new LinkedHashMap<>();
    Map<String, List<Double>> p50 = new LinkedHashMap<>();
    Map<String, List<Double>> p99 = new LinkedHashMap<>();
    Map<String, List<Double>> cpu = new LinkedHashMap<>();
    Map<String, Long> errors = new LinkedHashMap<>();
    try {
      for (String name : names) {
        callers.put(name, new LoadGenerator.Caller(targets.get(name)));
        all.put(name, LoadGenerator.newHistogram());
        p50.put(name, new ArrayList<>());
        p99.put(name, new ArrayList<>());
        cpu.put(name, new ArrayList<>());
        errors.put(name, 0L);
      }
      Histogram one = LoadGenerator.newHistogram();
      for (int cycle = 0; cycle < cycles; cycle++) {
        if (cycle % 10 == 0) {
          log.accept(String.format("alternating latency: cycle %d of %d", cycle + 1, cycles));
        }
        for (int i = 0; i < names.size(); i++) {
          String name = names.get((i + cycle) % names.size());
          LoadGenerator.Caller caller = callers.get(name);
          long failed = caller.run(settle, null);
          one.reset();
          CpuMeter meter = CpuMeter.start(processes.get(name));
          long start = System.nanoTime();
          failed += caller.run(slice, one);
          double seconds = (System.nanoTime() - start) / 1e9;
          double cores = meter.coresUsed();
          errors.merge(name, failed, Long::sum);
          all.get(name).add(one);
          // A slice without a call (the endpoint failing throughout) keeps its place, so cycles stay paired.
          boolean any = one.getTotalCount() > 0;
          LoadGenerator.Latency l = any ? LoadGenerator.Latency.of(one) : null;
          p50.get(name).add(any ? l.p50() : Double.NaN);
          p99.get(name).add(any ? l.p99() : Double.NaN);
          cpu.get(name).add(any ? cores * seconds * 1e6 / one.getTotalCount() : Double.NaN);
        }
      }
    } finally {
      callers.values().forEach(LoadGenerator.Caller::close);
    }
    Map<String, Result> out = new LinkedHashMap<>();
    double measured = cycles * slice.toNanos() / 1e9;
    for (String name : names) {
      Histogram h = all.get(name);
      out.put(name, new Result(LoadGenerator.Latency.of(h), h.getTotalCount() / measured, errors.get(name),
          List.copyOf(p50.get(name)), List.copyOf(p99.get(name)), List.copyOf(cpu.get(name))));
    }
    return out;
  }
}
