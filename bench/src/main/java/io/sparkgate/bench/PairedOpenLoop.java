package io.sparkgate.bench;

import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * The open loop with the endpoints taking turns: in each cycle every endpoint gets one slice at the rate, in a
 * shuffled order, and the cycles pair the endpoints' slices as the alternating scenario's buckets pair its
 * calls. Measured one 10 s window per endpoint, even in interleaved rounds, the open loop's p99 disagreed from
 * run to run (full at 2,000 calls/s two to three times TLS-only's in one run and level with it half an hour
 * later, bench/README.md, twenty-fourth round): a burst of the machine's noise lands on whichever endpoint's
 * window it falls in. Slices of a second, cycle after cycle, spread every burst over all endpoints alike.
 *
 * <p>The endpoints cannot share a slice: at these rates one proxy alone uses most of a core of the 2-core
 * machines this bench runs on. Each endpoint keeps one connection for the whole scenario and is idle while the
 * others take their turns, so each slice starts with an unmeasured lead-in at the rate (caches refilled, event
 * loops spinning again); only calls intended after it are measured.
 */
final class PairedOpenLoop {
  /**
   * One endpoint at one rate: all its measured calls as one open loop, and each cycle's corrected p50 and p99
   * and its processes' CPU per call started (lead-in included), in cycle order (NaN for a slice in which no
   * call succeeded).
   */
  record Result(
      LoadGenerator.OpenLoop all,
      List<Double> sliceCorrectedP50,
      List<Double> sliceCorrectedP99,
      List<Double> sliceCpuPerCall) {}

  private PairedOpenLoop() {}

  /**
   * Runs {@code cycles} cycles at {@code rate} calls a second: in each, every endpoint of {@code targets} for
   * {@code lead} plus {@code slice}, one after another in a shuffled order. The CPU of an endpoint's process
   * in {@code processes} is measured over each of its slices (the backend's for direct: in direct's slice it
   * serves no one else).
   */
  static Map<String, Result> run(
      Map<String, LoadGenerator.Target> targets,
      Map<String, Process> processes,
      int rate,
      int cycles,
      Duration lead,
      Duration slice,
      Consumer<String> log)
      throws InterruptedException {
    if (rate < 1 || cycles < 2 || slice.isZero() || slice.isNegative() || lead.isNegative()) {
      throw new IllegalArgumentException(
          "the paired open loop needs a positive rate and slice, a lead-in of zero"
              + " or more and at least two cycles (they are paired)");
    }
    List<String> names = new ArrayList<>(targets.keySet());
    Map<String, ManagedChannel> channels = new LinkedHashMap<>();
    Map<String, Series> series = new LinkedHashMap<>();
    byte[] request = BenchProtocol.executePlanRequest(UUID.randomUUID().toString(), 16, 1);
    Random shuffle = new Random(11); // the same orders in every run
    double callsStarted =
        rate * (lead.toNanos() + slice.toNanos()) / 1e9; // per slice, lead-in included
    List<String> order = new ArrayList<>(names);
    try {
      for (String name : names) {
        ManagedChannel ch = LoadGenerator.channel(targets.get(name));
        channels.put(name, ch);
        series.put(name, new Series());
        LoadGenerator.smallCall(ch, request); // connect before the first slice
      }
      for (int c = 0; c < cycles; c++) {
        if (c % 10 == 0) {
          log.accept(
              String.format(
                  "open loop %d/s, endpoints in turn: cycle %d of %d", rate, c + 1, cycles));
        }
        Collections.shuffle(order, shuffle); // no endpoint always follows the same one
        for (String name : order) {
          Series s = series.get(name);
          Process process = processes.get(name);
          CpuMeter cpu = process == null ? null : CpuMeter.start(process);
          LoadGenerator.OpenWindow w =
              LoadGenerator.openWindow(
                  channels.get(name),
                  request,
                  rate,
                  lead,
                  slice,
                  s.raw,
                  s.corrected,
                  LoadGenerator.SYSTEM);
          s.slice(w, cpu == null ? Double.NaN : cpu.cpuSeconds() * 1e6 / callsStarted);
        }
      }
    } finally {
      channels.values().forEach(ManagedChannel::shutdownNow);
    }
    Map<String, Result> out = new LinkedHashMap<>();
    series.forEach((name, s) -> out.put(name, s.result(rate)));
    return out;
  }

  /** One endpoint's slices: the one being measured, and the totals over all of them. */
  private static final class Series {
    private final Histogram raw = LoadGenerator.newHistogram();
    private final Histogram corrected = LoadGenerator.newHistogram();
    private final Histogram allRaw = LoadGenerator.newHistogram();
    private final Histogram allCorrected = LoadGenerator.newHistogram();
    private final List<Double> p50 = new ArrayList<>();
    private final List<Double> p99 = new ArrayList<>();
    private final List<Double> cpu = new ArrayList<>();
    private long completed;
    private long errors;
    private long late;
    private double seconds;

    /** Folds in the slice just measured into raw and corrected, and clears them for the next. */
    void slice(LoadGenerator.OpenWindow w, double cpuPerCall) {
      completed += w.completed();
      errors += w.errors();
      late += w.late();
      seconds += w.seconds();
      boolean any = corrected.getTotalCount() > 0;
      LoadGenerator.Latency l = any ? LoadGenerator.Latency.of(corrected) : null;
      // A slice without a successful call keeps its place, so cycles stay paired.
      p50.add(any ? l.p50() : Double.NaN);
      p99.add(any ? l.p99() : Double.NaN);
      cpu.add(any ? cpuPerCall : Double.NaN);
      allRaw.add(raw);
      allCorrected.add(corrected);
      raw.reset();
      corrected.reset();
    }

    Result result(int rate) {
      var all =
          new LoadGenerator.OpenLoop(
              rate,
              seconds > 0 ? completed / seconds : 0,
              seconds,
              errors,
              late,
              LoadGenerator.Latency.of(allRaw),
              LoadGenerator.Latency.of(allCorrected));
      return new Result(all, List.copyOf(p50), List.copyOf(p99), List.copyOf(cpu));
    }
  }
}
