package io.sparkgate.engine;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** The end of an engine's log: what the operator needs when it failed. */
final class EngineLogs {
  private static final int MAX_BYTES = 8192;

  private EngineLogs() {}

  /** {@code ": last lines of <log>:\n..."}, or where the log is when it cannot be read. */
  static String tail(Path log, int lines) {
    try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
      long start = Math.max(0, f.length() - MAX_BYTES);
      byte[] bytes = new byte[(int) (f.length() - start)];
      f.seek(start);
      f.readFully(bytes);
      String[] all = new String(bytes, StandardCharsets.UTF_8).split("\n");
      int from = Math.max(0, all.length - lines);
      StringBuilder out = new StringBuilder("; last lines of ").append(log).append(':');
      for (int i = from; i < all.length; i++) out.append("\n  ").append(all[i]);
      return out.toString();
    } catch (IOException e) {
      return "; its log " + log + " cannot be read: " + e.getMessage();
    }
  }
}
