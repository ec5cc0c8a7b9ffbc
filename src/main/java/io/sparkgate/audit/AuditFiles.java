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
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * The files of one audit log: the current file and, beside it, rotated files named
 * {@code <name>-<UTC time>-<n>.jsonl.gz}, which sort in the order they were written.
 */
final class AuditFiles {
  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

  private final Path current;

  AuditFiles(Path current) {
    this.current = current;
  }

  Path current() {
    return current;
  }

  /** Compresses the current file into a new rotated file and removes it. */
  Path rotate(Instant now) throws IOException {
    String base = baseName();
    Path target;
    int n = 0;
    do {
      target = current.resolveSibling(String.format("%s-%s-%04d.jsonl.gz", base, STAMP.format(now), n++));
    } while (Files.exists(target));
    Path partial = target.resolveSibling(target.getFileName() + ".partial");
    try (InputStream in = Files.newInputStream(current);
        OutputStream out = new GZIPOutputStream(Files.newOutputStream(partial), 64 * 1024)) {
      in.transferTo(out);
    }
    // Only a complete gzip file gets the final name; the current file goes only after that.
    Files.move(partial, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    Files.delete(current);
    return target;
  }

  /** Rotated files, oldest first. */
  List<Path> rotated() throws IOException {
    List<Path> out = new ArrayList<>();
    Path dir = current.toAbsolutePath().getParent();
    if (dir == null || !Files.isDirectory(dir)) {
      return out;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, baseName() + "-*.jsonl.gz")) {
      files.forEach(out::add);
    }
    out.sort(null);
    return out;
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
    if (file.getFileName().toString().endsWith(".gz")) {
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
