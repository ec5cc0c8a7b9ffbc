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
 * moves them, for seconds to minutes at a time, between cores that share a last-level cache (a round trip
 * between them of about 150 ns) and cores that do not (about 500 ns); in the second state a copy of data the
 * other core has just written takes twice as long, and every proxy streams slower (bench/README.md,
 * thirty-second round). Each streaming round is tagged with the share of samples in which the vCPUs were near,
 * so a round's figure can be read against the state it was measured in.
 *
 * <p>The probe is {@code bench/tools/xcore.c}, which {@code bench/run.sh} compiles where gcc is installed; it
 * samples only while its gate file exists, so the latency scenarios run without it.
 */
final class CoreCanary implements AutoCloseable {
  /** Round trips were near 150 ns or near 500 ns, nothing between; this splits them. */
  static final double NEAR_NS = 300;
  private static final Pattern SAMPLE = Pattern.compile("rtt_ns_p50=(\\S+) xcopy_ns_per_KiB=(\\S+)");

  private final Process process;
  private final Path gate;
  private final List<Sample> samples = new ArrayList<>(); // guarded by itself

  /** One sample: when it was read, its median round trip and its median cross-core copy cost. */
  record Sample(long nanoTime, double roundTripNs, double crossCopyNsPerKiB) {
    boolean near() {
      return roundTripNs < NEAR_NS;
    }
  }

  /** The share of a window's samples with the vCPUs near, and their median cross-core copy cost. */
  record Window(int samples, double nearShare, double crossCopyNsPerKiB) {}

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
      return new Window(0, Double.NaN, Double.NaN);
    }
    double near = in.stream().filter(Sample::near).count() / (double) in.size();
    double[] copies = in.stream().mapToDouble(Sample::crossCopyNsPerKiB).sorted().toArray();
    return new Window(in.size(), near, copies[copies.length / 2]);
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
