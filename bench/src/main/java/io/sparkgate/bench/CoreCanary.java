package io.sparkgate.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the host has put the VM's two vCPUs while a streaming window runs. On this project's VMs the host
 * moves them, for seconds to minutes at a time, between three placements, each with its own cost of moving
 * data between them: the two hardware threads of one core (a round trip of about 110 ns, and a 256 KiB copy
 * of what the other vCPU has just written at 10 ns/KiB, as fast as a copy within one), two cores that share
 * a last-level cache (150 ns, 15 ns/KiB) and two cores that do not (500 ns, 31 ns/KiB). Every endpoint
 * streams at a different speed in each (bench/README.md, thirty-second round), so each streaming round is
 * tagged with the placement it ran in and its figure can be read against it.
 *
 * <p>The probe is {@code bench/tools/xcore.c}, which {@code bench/run.sh} compiles where gcc is installed; it
 * samples only while its gate file exists, so the latency scenarios run without it.
 */
final class CoreCanary implements AutoCloseable {
  /** Round trips were about 110, 150 or 500 ns: this splits the last from the others. */
  static final double SHARED_CACHE_NS = 300;
  /** Cross-core copies ran at about 10, 15 or 31 ns/KiB: this splits the first from the others. */
  static final double SIBLINGS_NS_PER_KIB = 12;
  /** A window is in one placement when at least this share of its samples were. */
  static final double DOMINANT = 0.8;
  private static final Pattern SAMPLE = Pattern.compile("rtt_ns_p50=(\\S+) xcopy_ns_per_KiB=(\\S+)");

  private final Process process;
  private final Path gate;
  private final List<Sample> samples = new ArrayList<>(); // guarded by itself

  /** Where the two vCPUs were. */
  enum Placement {
    SIBLINGS("one core"), SHARED_CACHE("shared L3"), APART("apart"), MIXED("mixed");

    final String label;

    Placement(String label) {
      this.label = label;
    }
  }

  /** One sample: when it was read, its median round trip and its median cross-core copy cost. */
  record Sample(long nanoTime, double roundTripNs, double crossCopyNsPerKiB) {
    Placement placement() {
      if (roundTripNs >= SHARED_CACHE_NS) {
        return Placement.APART;
      }
      return crossCopyNsPerKiB < SIBLINGS_NS_PER_KIB ? Placement.SIBLINGS : Placement.SHARED_CACHE;
    }
  }

  /** A window's samples: how many, the placement of at least {@link #DOMINANT} of them, their median copy cost. */
  record Window(int samples, Placement placement, double crossCopyNsPerKiB) {}

  private CoreCanary(Process process, Path gate) {
    this.process = process;
    this.gate = gate;
    Thread reader = new Thread(this::read, "core-canary");
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts the probe, or returns null when it was not built (no gcc): the runs then go without. */
  static CoreCanary start(Path binary, Path work) throws IOException {
    if (binary == null || !Files.isExecutable(binary)) {
      return null;
    }
    Path gate = work.resolve("core-canary.gate");
    Files.deleteIfExists(gate);
    Process p = new ProcessBuilder(binary.toString(), gate.toString())
        .redirectError(work.resolve("core-canary.err").toFile()).start();
    return new CoreCanary(p, gate);
  }

  /** Starts sampling, every 2 s, until {@link #pause()}. */
  void sample() throws IOException {
    Files.write(gate, new byte[0]);
  }

  void pause() throws IOException {
    Files.deleteIfExists(gate);
  }

  /** The samples read between two {@link System#nanoTime()} readings. */
  Window window(long fromNanos, long toNanos) {
    List<Sample> in = new ArrayList<>();
    synchronized (samples) {
      for (Sample s : samples) {
        if (s.nanoTime() >= fromNanos && s.nanoTime() <= toNanos) {
          in.add(s);
        }
      }
    }
    if (in.isEmpty()) {
      return new Window(0, Placement.MIXED, Double.NaN);
    }
    Placement dominant = Placement.MIXED;
    for (Placement p : Placement.values()) {
      if (in.stream().filter(x -> x.placement() == p).count() >= DOMINANT * in.size()) {
        dominant = p;
      }
    }
    double[] copies = in.stream().mapToDouble(Sample::crossCopyNsPerKiB).sorted().toArray();
    return new Window(in.size(), dominant, copies[copies.length / 2]);
  }

  private void read() {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        Matcher m = SAMPLE.matcher(line);
        if (m.find()) {
          Sample s = new Sample(System.nanoTime(), Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)));
          synchronized (samples) {
            samples.add(s);
          }
        }
      }
    } catch (IOException e) {
      // The probe stopped (close): nothing more to read.
    }
  }

  @Override
  public void close() throws IOException {
    process.destroy();
    pause();
  }
}
