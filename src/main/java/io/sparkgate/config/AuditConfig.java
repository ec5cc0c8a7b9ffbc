package io.sparkgate.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * Where and how the audit log is written.
 *
 * @param file the current log file (rotated files sit beside it, gzipped); empty means stdout
 * @param maxFileSize rotate when the current file reaches this size
 * @param rotateInterval rotate when the current file is this old
 * @param queueSize records waiting to be written; past this, calls are counted as unaudited (or refused
 *     when {@code required})
 * @param fsync when written records are forced to disk
 * @param required refuse new calls (UNAVAILABLE) rather than run them unaudited
 * @param includeLiterals log SQL literals and local data; off by default because they can hold personal data
 */
public record AuditConfig(
    boolean enabled,
    Optional<Path> file,
    long maxFileSize,
    Duration rotateInterval,
    int queueSize,
    Fsync fsync,
    boolean required,
    boolean includeLiterals) {

  /** When records reach the disk: never forced, once per written batch, or after every record. */
  public enum Fsync {
    NEVER,
    BATCH,
    ALWAYS
  }

  public static AuditConfig disabled() {
    return new AuditConfig(false, Optional.empty(), 0, Duration.ZERO, 1, Fsync.NEVER, false, false);
  }

  static AuditConfig read(Node node) {
    node.allowOnly("file", "stdout", "max_file_size", "rotate_interval", "queue_size", "fsync", "required",
        "include_literals");
    boolean stdout = node.bool("stdout", false);
    Optional<Path> file = node.optionalString("file").map(text -> node.resolve(text));
    if (stdout == file.isPresent()) {
      throw node.error("set exactly one of file (a path) or stdout: true");
    }
    String fsync = node.string("fsync", "batch").toUpperCase(Locale.ROOT);
    Fsync mode;
    try {
      mode = Fsync.valueOf(fsync);
    } catch (IllegalArgumentException e) {
      throw node.errorAt("fsync", "must be never, batch or always, got '" + fsync.toLowerCase(Locale.ROOT) + "'");
    }
    return new AuditConfig(
        true,
        file,
        node.bytes("max_file_size", 100L * 1024 * 1024, 4096, Long.MAX_VALUE),
        node.duration("rotate_interval", Duration.ofDays(1), Duration.ofSeconds(1), Duration.ofDays(366)),
        node.integer("queue_size", 10_000, 1, 10_000_000),
        mode,
        node.bool("required", false),
        node.bool("include_literals", false));
  }
}
