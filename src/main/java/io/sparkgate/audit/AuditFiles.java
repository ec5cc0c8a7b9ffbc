package io.sparkgate.audit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.zip.Deflater;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * The files of one audit log: the current file and, beside it, rotated files named
 * {@code <name>-<UTC time>-<n>.jsonl.gz} (or {@code .jsonl} until compressed), which sort in the order they
 * were written.
 */
final class AuditFiles {
  private static final String ROTATED = ".jsonl";
  private static final String GZ = ".gz";
  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

  private final Path current;

  AuditFiles(Path current) {
    this.current = current;
  }

  Path current() {
    return current;
  }

  /**
   * Renames the current file to a new rotated name, uncompressed: a rename, so the writer goes on at once.
   * {@link #compress} then makes it a {@code .jsonl.gz} off the writer's thread.
   */
  Path rotate(Instant now) throws IOException {
    String base = baseName();
    Path target;
    int n = 0;
    do {
      target =
          current.resolveSibling(
              String.format("%s-%s-%04d%s", base, STAMP.format(now), n++, ROTATED));
    } while (Files.exists(target) || Files.exists(gzipped(target)));
    Files.move(current, target, StandardCopyOption.ATOMIC_MOVE);
    return target;
  }

  /**
   * Compresses a rotated file into {@code <name>.gz} and removes it. Only a complete gzip file gets its
   * final name, and the uncompressed file goes only after that: a crash at any point leaves every record in
   * one complete file (both, briefly, which {@link #rotated} resolves to the compressed one).
   */
  static Path compress(Path rotated) throws IOException {
    Path target = gzipped(rotated);
    // Hidden, so that a shell glob for the log's files never picks up a half-written one.
    Path partial = rotated.resolveSibling("." + target.getFileName() + ".partial");
    try (InputStream in = Files.newInputStream(rotated);
        OutputStream out = new FastGzip(Files.newOutputStream(partial))) {
      in.transferTo(out);
    }
    Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
    Files.delete(rotated);
    return target;
  }

  /**
   * Deflate's fastest level: audit lines compress about as well at it (their bulk is hex digests and UUIDs)
   * and it costs a fraction of the default level's CPU, which the proxy's event loops share.
   */
  private static final class FastGzip extends GZIPOutputStream {
    FastGzip(OutputStream out) throws IOException {
      super(out, 64 * 1024);
      def.setLevel(Deflater.BEST_SPEED);
    }
  }

  /** The compressed form of a rotated file. */
  static Path gzipped(Path rotated) {
    return rotated.resolveSibling(rotated.getFileName() + GZ);
  }

  /** The uncompressed form of a compressed rotated file. */
  private static Path plain(Path gzipped) {
    String name = gzipped.getFileName().toString();
    return gzipped.resolveSibling(name.substring(0, name.length() - GZ.length()));
  }

  private static boolean isGzipped(Path file) {
    return file.getFileName().toString().endsWith(GZ);
  }

  /**
   * Finishes what a stop or crash interrupted: removes an uncompressed rotated file whose compressed form is
   * complete, and returns those still to compress, oldest first.
   */
  List<Path> interruptedRotations() throws IOException {
    List<Path> toCompress = new ArrayList<>();
    for (Path p : rotated()) {
      if (isGzipped(p)) {
        Files.deleteIfExists(
            plain(p)); // compressed completely before the crash; only the delete was missed
      } else {
        toCompress.add(p);
      }
    }
    return toCompress;
  }

  /** Rotated files, compressed or not yet, oldest first; where both forms of one exist, the compressed one. */
  List<Path> rotated() throws IOException {
    TreeMap<String, Path> byName = new TreeMap<>();
    Path dir = current.toAbsolutePath().getParent();
    if (dir == null || !Files.isDirectory(dir)) {
      return new ArrayList<>();
    }
    try (DirectoryStream<Path> files =
        Files.newDirectoryStream(dir, baseName() + "-*" + ROTATED + "{," + GZ + "}")) {
      for (Path p : files) {
        byName.merge(
            (isGzipped(p) ? plain(p) : p).getFileName().toString(),
            p,
            (a, b) -> isGzipped(a) ? a : b);
      }
    }
    return new ArrayList<>(byName.values());
  }

  /** The last line written to this log (current file, else the newest rotated one), or null. */
  String lastLine() throws IOException {
    if (Files.exists(current) && Files.size(current) > 0) {
      return lastLine(current);
    }
    List<Path> rotated = rotated();
    return rotated.isEmpty() ? null : lastLine(rotated.get(rotated.size() - 1));
  }

  static String lastLine(Path file) throws IOException {
    String last = null;
    try (BufferedReader reader = open(file)) {
      for (String line = reader.readLine(); line != null; line = reader.readLine()) {
        if (!line.isEmpty()) {
          last = line;
        }
      }
    }
    return last;
  }

  static BufferedReader open(Path file) throws IOException {
    InputStream in = Files.newInputStream(file);
    if (isGzipped(file)) {
      in = new GZIPInputStream(in, 64 * 1024);
    }
    return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 64 * 1024);
  }

  private String baseName() {
    String name = current.getFileName().toString();
    int dot = name.lastIndexOf('.');
    return dot > 0 ? name.substring(0, dot) : name;
  }
}
