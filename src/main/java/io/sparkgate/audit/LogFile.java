package io.sparkgate.audit;

import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
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
  private long committed; // bytes known to have reached the file (flushed)
  private Object fileKey; // which file committed counts for
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
    committed = bytes;
    fileKey = Files.readAttributes(files.current(), BasicFileAttributes.class).fileKey();
  }

  /** Appends one line and its newline (buffered: {@link #commit} or {@link #force} passes it on). */
  void append(byte[] line) throws IOException {
    out.write(line);
    out.write('\n');
    bytes += line.length + 1;
  }

  /** Flushes, and marks everything appended so far as in the file: {@link #recover} keeps it. */
  void commit() throws IOException {
    out.flush();
    committed = bytes;
  }

  /**
   * After a failed write: drops what is buffered, cuts the file back to its last {@link #commit} (a failed
   * write may have left part of a line, which would break the chain for good) and opens it again. The
   * directory is created again if it went away.
   */
  void recover() throws IOException {
    if (files == null) {
      return; // standard output: nothing to cut back
    }
    try {
      fileOut.close(); // not out: flushing the buffer again would write the failed bytes
    } catch (IOException | RuntimeException ignored) {
      // The descriptor is released either way.
    }
    long keep = committed;
    Object key = fileKey;
    Files.createDirectories(files.current().toAbsolutePath().getParent());
    openFile();
    if (bytes > keep && java.util.Objects.equals(key, fileKey)) {
      fileOut.getChannel().truncate(keep);
      bytes = keep;
      committed = keep;
    }
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

  /**
   * Free space a failed log waits for before it writes again. A disk that just failed a write often still has
   * the tail of the file's last block, where a small record fits while the next batch would not: writing
   * there would take the log in and out of failure, and admit calls under {@code audit.required} whose
   * records then fail.
   */
  static final long RECOVERY_FREE_BYTES = 64 * 1024;

  /** Whether the file's filesystem has {@link #RECOVERY_FREE_BYTES} free (standard output: always). */
  boolean roomToWrite() {
    if (files == null) {
      return true;
    }
    try {
      Path dir = files.current().toAbsolutePath().getParent();
      return Files.getFileStore(Files.exists(files.current()) ? files.current() : dir)
              .getUsableSpace()
          >= RECOVERY_FREE_BYTES;
    } catch (IOException | RuntimeException e) {
      return false;
    }
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
