package io.sparkgate.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A tmpfs of a few hundred KiB that a test mounts, fills and frees, to give the audit writer a disk that is
 * really full: writes fail with ENOSPC as they would on a real volume (as root, permission bits stop
 * nothing, and a file-size limit would kill the JVM with SIGXFSZ). Mounting needs root (CAP_SYS_ADMIN), which
 * the developers' machines and CI have; elsewhere the test is skipped, unless {@code SPARKGATE_CI=1}.
 */
public final class SmallFilesystem implements AutoCloseable {
  private final Path mountPoint;
  private final Path filler;

  private SmallFilesystem(Path mountPoint) {
    this.mountPoint = mountPoint;
    this.filler = mountPoint.resolve(".filler");
  }

  /** Mounts a tmpfs of {@code kib} KiB on a new directory {@code dir}. */
  public static SmallFilesystem mount(Path dir, int kib) throws Exception {
    Files.createDirectories(dir);
    String output = run("mount", "-t", "tmpfs", "-o", "size=" + kib + "k", "tmpfs", dir.toString());
    if (output != null) {
      String why = "cannot mount a tmpfs to fill (" + output.strip() + "); the test needs root";
      if ("1".equals(System.getenv(DebianPackages.CI))) {
        fail(why + ", and " + DebianPackages.CI + "=1 requires it");
      }
      Assumptions.abort(why);
    }
    return new SmallFilesystem(dir);
  }

  public Path path() {
    return mountPoint;
  }

  /** Writes a filler file until the filesystem is full: every later write of a byte fails. */
  public void fill() throws IOException {
    byte[] block = new byte[4096];
    try (OutputStream out = Files.newOutputStream(filler)) {
      while (true) {
        out.write(block);
      }
    } catch (IOException full) {
      if (!String.valueOf(full.getMessage()).contains("No space left")) {
        throw full;
      }
    }
    // The last partial block may have left room for a few bytes: take them too.
    try (OutputStream out =
        Files.newOutputStream(filler, java.nio.file.StandardOpenOption.APPEND)) {
      for (int i = 0; i < 4096; i++) {
        out.write(0);
        out.flush();
      }
    } catch (IOException full) {
      // full now
    }
  }

  /** Deletes the filler: the disk has room again. */
  public void free() throws IOException {
    Files.deleteIfExists(filler);
  }

  @Override
  public void close() throws Exception {
    String output = run("umount", "-l", mountPoint.toString());
    if (output != null) {
      throw new IOException("umount " + mountPoint + ": " + output);
    }
  }

  /** Null when the command succeeded, else what it printed (or why it could not run). */
  private static String run(String... command) throws InterruptedException {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readAllBytes());
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return "timed out";
      }
      return p.exitValue() == 0 ? null : output + " (exit " + p.exitValue() + ")";
    } catch (IOException e) {
      return e.getMessage();
    }
  }
}
