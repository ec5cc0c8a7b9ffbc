package io.sparkgate.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;

/**
 * Small calls from many callers at once: how many calls an endpoint serves a second when the machine's CPU is
 * what limits it, and, for a Sparkgate that audits, whether its audit log kept up. The audit writer is one
 * thread that competes with the event loops for the same cores; if it cannot keep up, its queue (10,000
 * records by default) fills, and from then on every record that finds it full is dropped and logged. A
 * 10 s window can end before the queue is full, so the writer's lag is reported too: how far the audit file
 * trails the load when the load stops. A writer that keeps up trails by its linger and one call; one that
 * falls behind, by seconds that grow with the window.
 */
final class Saturation {
  /** Callers, each on its own connection: on two cores, enough that the proxy, not the callers, is the limit. */
  static final int CALLERS = 16;

  /** What the proxy logs, once per record it could not queue (AuditInterceptor). */
  private static final String DROPPED = "audit record dropped";

  /** Enough of the file's end to hold its last complete record (a small call's is well under 2 KiB). */
  private static final int TAIL_BYTES = 64 * 1024;

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Where an auditing endpoint's evidence is: its process log and its current audit file. */
  record Audit(Path proxyLog, Path auditFile) {}

  /**
   * The load's figures and the CPU the endpoint's processes spent per call (for direct: the backend's); for
   * an endpoint that audits, records dropped during the window and the audit lag
   * (milliseconds from the start of the last call in the audit file to the end of the load; null if the file
   * had no complete record then, as just after a rotation). Both null for an endpoint without an audit log.
   */
  record Result(
      LoadGenerator.ClosedLoop load,
      double cpuMicrosPerCall,
      Long auditDropped,
      Double auditLagMillis) {}

  private Saturation() {}

  /** One measurement of {@code endpoint}'s processes; {@code audit} is null for an endpoint that does not audit. */
  static Result run(
      LoadGenerator.Target target, Process endpoint, Audit audit, Duration warmup, Duration measure)
      throws InterruptedException {
    long before = audit == null ? 0 : droppedLines(audit.proxyLog());
    CpuMeter cpu = CpuMeter.start(endpoint);
    LoadGenerator.ClosedLoop load = LoadGenerator.closedLoop(target, CALLERS, warmup, measure);
    Instant stopped = Instant.now();
    // The meter spans the load's warm-up too: the same load, so the same rate of CPU.
    double cpuPerCall = cpu.coresUsed() * 1e6 / load.callsPerSecond();
    if (audit == null) {
      return new Result(load, cpuPerCall, null, null);
    }
    Instant last = lastRecordTime(audit.auditFile());
    Double lag = last == null ? null : Duration.between(last, stopped).toNanos() / 1e6;
    // A drop is logged when its call ends, so by now every one of this load's is in the log.
    return new Result(load, cpuPerCall, droppedLines(audit.proxyLog()) - before, lag);
  }

  private static long droppedLines(Path log) {
    try (Stream<String> lines = Files.lines(log, StandardCharsets.ISO_8859_1)) {
      return lines.filter(l -> l.contains(DROPPED)).count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The "time" (the call's start) of the last complete record in the file, or null if it has none. */
  private static Instant lastRecordTime(Path file) {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
      long length = f.length();
      int n = (int) Math.min(length, TAIL_BYTES);
      byte[] tail = new byte[n];
      f.seek(length - n);
      f.readFully(tail);
      // The writer's buffer can reach the file mid-record: only a line with its newline is
      // complete.
      int end = lastIndexOf(tail, n);
      if (end < 0) {
        return null;
      }
      int start = lastIndexOf(tail, end) + 1;
      if (start == 0 && n < length) {
        return null; // a record longer than the tail read: none here is that long
      }
      JsonNode record = JSON.readTree(new String(tail, start, end - start, StandardCharsets.UTF_8));
      return Instant.parse(record.path("time").asText());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The last newline before {@code before}, or -1. */
  private static int lastIndexOf(byte[] bytes, int before) {
    for (int i = before - 1; i >= 0; i--) {
      if (bytes[i] == '\n') {
        return i;
      }
    }
    return -1;
  }
}
