package io.sparkgate.bench;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * Closed-loop latency, one caller, with the endpoints taking turns call by call: one small ExecutePlan to each
 * endpoint in a shuffled order, then again, for the whole scenario. The closed-loop scenario's 10 s rounds
 * were too coarse for the 2-core VMs this bench runs on. Their host noise comes in bursts (direct's p50 ranged
 * over 171-456 us between the rounds of one run), so one endpoint's round could fall in a burst and another's
 * outside it. Taking turns in 2 s slices was still too coarse: over 40 cycles the median of full minus nginx
 * L7 had a 95% interval 106 us wide. Call by call, every endpoint meets the same noise within a millisecond or
 * two, and what is left between them is their own difference.
 *
 * <p>The calls are grouped into buckets of a few seconds for the paired figures: each bucket's p50, p99 and
 * CPU per call, per endpoint, compared bucket by bucket ({@link Paired}). Each endpoint keeps one connection
 * for the whole scenario. Its process waits while the others are called, so unlike the closed-loop scenario it
 * answers a call after being idle a millisecond or so, as a proxy with sporadic callers does; every endpoint
 * is measured the same way.
 */
final class Alternating {
  /**
   * One endpoint's figures: all its measured calls as one distribution, and each bucket's p50, p99 and CPU
   * per call (of the endpoint's processes; for direct, the backend's), in time order; NaN for a bucket in
   * which no call succeeded. For a JVM endpoint, also its heap's activity over the measured calls: bytes
   * allocated per call, collections and their pause (NaN and -1 for the others).
   */
  record Result(
      LoadGenerator.Latency latency,
      double callsPerSecond,
      long errors,
      List<Double> bucketP50,
      List<Double> bucketP99,
      List<Double> bucketCpuPerCall,
      double allocatedBytesPerCall,
      long collections,
      long collectionMillis) {}

  /** Calls to each endpoint before anything is recorded: connections, caches, the last of the JIT. */
  private static final int SETTLE_PASSES = 500;

  private Alternating() {}

  /**
   * Calls {@code targets} in turn for {@code length}, in buckets of {@code bucket}. The CPU of an endpoint's
   * process in {@code processes} is measured; leave out one that also serves the others (the backend, for
   * direct), whose CPU would not be its own. The heap of an endpoint in {@code jvms} is read once before the
   * first bucket and once after the last, so that reading it disturbs no bucket.
   */
  static Map<String, Result> run(
      Map<String, LoadGenerator.Target> targets,
      Map<String, Process> processes,
      Map<String, JvmProbe> jvms,
      Duration length,
      Duration bucket,
      Consumer<String> log)
      throws InterruptedException, IOException {
    if (bucket.isZero() || bucket.isNegative() || length.compareTo(bucket) < 0) {
      throw new IllegalArgumentException(
          "alternating needs a positive bucket no longer than the run");
    }
    List<String> names = new ArrayList<>(targets.keySet());
    Map<String, LoadGenerator.Caller> callers = new LinkedHashMap<>();
    Map<String, Series> series = new LinkedHashMap<>();
    Random shuffle = new Random(7); // the same orders in every run
    List<String> pass = new ArrayList<>(names);
    try {
      for (String name : names) {
        callers.put(name, new LoadGenerator.Caller(targets.get(name), LoadGenerator.SYSTEM));
        series.put(name, new Series());
      }
      for (int i = 0; i < SETTLE_PASSES; i++) {
        for (String name : names) {
          callers.get(name).once();
        }
      }
      Map<String, JvmProbe.HeapActivity> heapBefore = heapActivity(names, jvms);
      long start = System.nanoTime();
      long end = start + length.toNanos();
      int buckets = 0;
      for (long bucketStart = start; bucketStart < end; bucketStart += bucket.toNanos()) {
        if (buckets++ % 20 == 0) {
          log.accept(
              String.format(
                  "alternating latency: %d s of %d",
                  (bucketStart - start) / 1_000_000_000L, length.toSeconds()));
        }
        Map<String, CpuMeter> cpu = new LinkedHashMap<>();
        names.stream()
            .filter(processes::containsKey)
            .forEach(name -> cpu.put(name, CpuMeter.start(processes.get(name))));
        series.values().forEach(Series::startBucket);
        long bucketEnd = Math.min(end, bucketStart + bucket.toNanos());
        while (System.nanoTime() < bucketEnd) {
          Collections.shuffle(pass, shuffle); // no endpoint always follows the same one
          for (String name : pass) {
            series.get(name).record(callers.get(name).once());
          }
        }
        double seconds = (System.nanoTime() - bucketStart) / 1e9;
        names.forEach(
            name ->
                series
                    .get(name)
                    .endBucket(
                        cpu.containsKey(name) ? cpu.get(name).coresUsed() * seconds : Double.NaN));
      }
      heapActivity(names, jvms)
          .forEach((name, after) -> series.get(name).heap = after.since(heapBefore.get(name)));
    } finally {
      callers.values().forEach(LoadGenerator.Caller::close);
    }
    Map<String, Result> out = new LinkedHashMap<>();
    double seconds = length.toNanos() / 1e9;
    series.forEach((name, s) -> out.put(name, s.result(seconds)));
    return out;
  }

  private static Map<String, JvmProbe.HeapActivity> heapActivity(
      List<String> names, Map<String, JvmProbe> jvms) throws IOException {
    Map<String, JvmProbe.HeapActivity> out = new LinkedHashMap<>();
    for (String name : names) {
      if (jvms.containsKey(name)) {
        out.put(name, jvms.get(name).heapActivity());
      }
    }
    return out;
  }

  /** One endpoint's calls: all of them, the bucket being filled, and its heap's activity over them. */
  private static final class Series {
    private final Histogram all = LoadGenerator.newHistogram();
    private final Histogram bucket = LoadGenerator.newHistogram();
    private final List<Double> p50 = new ArrayList<>();
    private final List<Double> p99 = new ArrayList<>();
    private final List<Double> cpu = new ArrayList<>();
    private long errors;
    private JvmProbe.HeapActivity heap;

    void startBucket() {
      bucket.reset();
    }

    void record(long nanos) {
      if (nanos < 0) {
        errors++;
      } else {
        bucket.recordValue(nanos);
      }
    }

    void endBucket(double cpuSeconds) {
      all.add(bucket);
      // A bucket without a call (the endpoint failing throughout) keeps its place, so buckets stay
      // paired.
      boolean any = bucket.getTotalCount() > 0;
      LoadGenerator.Latency l = any ? LoadGenerator.Latency.of(bucket) : null;
      p50.add(any ? l.p50() : Double.NaN);
      p99.add(any ? l.p99() : Double.NaN);
      cpu.add(any ? cpuSeconds * 1e6 / bucket.getTotalCount() : Double.NaN);
    }

    Result result(double seconds) {
      long calls = all.getTotalCount() + errors;
      boolean known = heap != null && heap.allocatedBytes() >= 0 && calls > 0;
      return new Result(
          LoadGenerator.Latency.of(all),
          all.getTotalCount() / seconds,
          errors,
          List.copyOf(p50),
          List.copyOf(p99),
          List.copyOf(cpu),
          known ? (double) heap.allocatedBytes() / calls : Double.NaN,
          heap == null ? -1 : heap.collections(),
          heap == null ? -1 : heap.collectionMillis());
    }
  }
}
