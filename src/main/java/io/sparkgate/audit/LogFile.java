package io.sparkgate.audit;

import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Where the writer appends record lines: standard output, or the current audit file, which it also forces to
 * disk and rotates by size and age. Writer thread only.
 */
final class LogFile {
  private final AuditFiles files; // null: standard output, never rotated
  private final long maxBytes;
  private final Duration maxAge;
  private OutputStream out;
  private FileOutputStream fileOut;
  private long bytes;
  private Instant opened;

  private LogFile(AuditFiles files, long maxBytes, Duration maxAge) {
    this.files = files;
    this.maxBytes = maxBytes;
    this.maxAge = maxAge;
  }

  static LogFile stdout() {
    LogFile log = new LogFile(null, Long.MAX_VALUE, Duration.ZERO);
    log.out = System.out;
    return log;
  }

  /**
   * Appends to {@code files}' current file (creating it and its directory), rotated once it reaches
   * {@code maxBytes} or is {@code maxAge} old; an existing file's age counts from its last change.
   */
  static LogFile append(AuditFiles files, long maxBytes, Duration maxAge, Clock clock)
      throws IOException {
    LogFile log = new LogFile(files, maxBytes, maxAge);
    Files.createDirectories(files.current().toAbsolutePath().getParent());
    boolean existed = Files.exists(files.current());
    log.openFile();
    log.opened = existed ? Files.getLastModifiedTime(files.current()).toInstant() : clock.instant();
    return log;
  }

  private void openFile() throws IOException {
    fileOut = new FileOutputStream(files.current().toFile(), true);
    out = new BufferedOutputStream(fileOut, 256 * 1024);
    bytes = Files.size(files.current());
  }

  /** Appends one line and its newline (buffered: {@link #flush} or {@link #force} passes it on). */
  void append(byte[] line) throws IOException {
    out.write(line);
    out.write('\n');
    bytes += line.length + 1;
  }

  void flush() throws IOException {
    out.flush();
  }

  /** Flushes and forces the file's data to disk; false for standard output, which cannot be forced. */
  boolean force() throws IOException {
    out.flush();
    if (fileOut == null) {
      return false;
    }
    fileOut.getChannel().force(false);
    return true;
  }

  /** Whether the file has reached its size limit. */
  boolean full() {
    return files != null && bytes >= maxBytes;
  }

  /** Whether the file holds records and has reached its size or age limit at {@code now}. */
  boolean rotationDue(Instant now) {
    return files != null
        && bytes > 0
        && (full() || Duration.between(opened, now).compareTo(maxAge) >= 0);
  }

  /** How long after {@code now} the file is due for rotation by age; Long.MAX_VALUE while none is pending. */
  long nanosUntilRotation(Instant now) {
    if (files == null || bytes == 0) {
      return Long.MAX_VALUE;
    }
    return Math.max(0, Duration.between(now, opened.plus(maxAge)).toNanos());
  }

  /**
   * Closes the file, renames it to its rotated name and starts a new one: a rename, so the writer goes on at
   * once. Returns the rotated file, still to be compressed.
   */
  Path rotate(Instant now) throws IOException {
    close();
    Path rotated = files.rotate(now);
    openFile();
    opened = now;
    return rotated;
  }

  /** Flushes, forces the file with its metadata, and closes it (standard output stays open). */
  void close() throws IOException {
    out.flush();
    if (fileOut != null) {
      fileOut.getChannel().force(true);
      out.close();
    }
  }
}
