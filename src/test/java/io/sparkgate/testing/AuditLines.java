package io.sparkgate.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The records of an audit file that a running proxy is still writing. The writer appends each batch with
 * write(2), and a reader can see a batch half copied into the file: a last line without its newline is a
 * record still being written, so it is left for the next read rather than parsed as a broken record.
 */
public final class AuditLines {
  private AuditLines() {}

  /** Every complete line (newline-terminated) of the file, in order; none when it does not exist. */
  public static List<String> complete(Path file) throws IOException {
    if (!Files.exists(file)) {
      return List.of();
    }
    String text = Files.readString(file, StandardCharsets.UTF_8);
    int end = text.lastIndexOf('\n');
    return end < 0 ? List.of() : text.substring(0, end).lines().toList();
  }
}
