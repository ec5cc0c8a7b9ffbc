package io.sparkgate.revoke;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JWT ids of {@code auth.revocations.denied_jti_file}: one a line, {@code #} to the line's end a comment,
 * blank lines ignored. Re-read when its modification time or size changes; a file that cannot be read keeps
 * the ids last read (never fewer because of a bad write) and is logged.
 */
final class DeniedTokens {
  private static final Logger log = LoggerFactory.getLogger(DeniedTokens.class);

  private final Path file;
  private volatile Set<String> ids = Set.of();
  private Object stamp; // poller thread only

  /** @throws IOException when the file cannot be read at start */
  DeniedTokens(Path file) throws IOException {
    this.file = file;
    stamp = stamp();
    ids = read();
    log.info("{} denied JWT ids in {}", ids.size(), file);
  }

  boolean contains(String jti) {
    return ids.contains(jti);
  }

  int size() {
    return ids.size();
  }

  Path file() {
    return file;
  }

  /** Re-reads the file if it changed; whether it did. */
  boolean refresh() {
    try {
      Object now = stamp();
      if (Objects.equals(now, stamp)) return false;
      Set<String> read = read();
      stamp = now;
      ids = read;
      log.info("re-read {}: {} denied JWT ids", file, read.size());
      return true;
    } catch (IOException e) {
      log.warn(
          "cannot re-read {} (the {} ids read before stay denied): {}",
          file,
          ids.size(),
          e.toString());
      return false;
    }
  }

  private Object stamp() throws IOException {
    FileTime modified = Files.getLastModifiedTime(file);
    return modified.toMillis() + ":" + Files.size(file);
  }

  private Set<String> read() throws IOException {
    Set<String> out = new LinkedHashSet<>();
    for (String line : Files.readAllLines(file)) {
      int hash = line.indexOf('#');
      String id = (hash < 0 ? line : line.substring(0, hash)).strip();
      if (!id.isEmpty()) out.add(id);
    }
    return Set.copyOf(out);
  }
}
