package io.sparkgate.audit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives the calling thread the lowest CPU priority (nice 19), on Linux, so that it runs only in what the
 * event loops leave over. For work that may lag but should never delay a call: compressing a rotated
 * audit file is a burst of 0.1-1 s of one core (16-100 MiB at deflate's fastest level), and Java's thread
 * priorities do not reach the Linux scheduler, so at the default priority that burst took a core from the
 * proxy's event loops for its whole length.
 *
 * <p>Linux keeps a nice value per thread and {@code renice -p} given a thread id changes that thread only;
 * lowering one's own priority needs no privilege. Elsewhere (where {@code renice -p} would renice the whole
 * process), or without a renice binary, the thread keeps its priority.
 */
final class BackgroundPriority {
  private static final Logger log = LoggerFactory.getLogger(BackgroundPriority.class);
  static final int NICE = 19;
  /** Absolute paths only: the proxy runs no program found through its environment. */
  private static final List<Path> RENICE = List.of(Path.of("/usr/bin/renice"), Path.of("/bin/renice"));
  private static final Path THREAD_SELF = Path.of("/proc/thread-self");

  private BackgroundPriority() {}

  /** Lowers the calling thread's priority; false (and a log line saying why) when it could not. */
  static boolean lowerCurrentThread() {
    String what = Thread.currentThread().getName();
    if (!System.getProperty("os.name", "").startsWith("Linux")) {
      log.debug("{}: keeps its priority (per-thread nice values are Linux only)", what);
      return false;
    }
    Path renice = RENICE.stream().filter(Files::isExecutable).findFirst().orElse(null);
    if (renice == null) {
      log.info("{}: no renice in /usr/bin or /bin; this thread competes with the event loops for CPU", what);
      return false;
    }
    try {
      String tid = threadId();
      Process p = new ProcessBuilder(renice.toString(), "-n", Integer.toString(NICE), "-p", tid)
          .redirectErrorStream(true)
          .start();
      p.getOutputStream().close();
      if (!p.waitFor(5, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        log.info("{}: renice did not finish; the thread keeps its priority", what);
        return false;
      }
      if (p.exitValue() != 0) {
        // A line or two at most: it fits the pipe, so reading after the exit cannot block.
        String output = new String(p.getInputStream().readAllBytes()).trim();
        log.info("{}: renice failed ({}); the thread keeps its priority", what, output);
        return false;
      }
      log.debug("{}: thread {} now runs at nice {}", what, tid, NICE);
      return true;
    } catch (IOException e) {
      log.info("{}: could not lower the thread's priority ({}); it competes with the event loops for CPU",
          what, e.toString());
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The kernel's id of the calling thread: /proc/thread-self links to {@code <pid>/task/<tid>}. */
  static String threadId() throws IOException {
    Path link = Files.readSymbolicLink(THREAD_SELF);
    String tid = link.getFileName().toString();
    if (!tid.chars().allMatch(Character::isDigit)) {
      throw new IOException("unexpected " + THREAD_SELF + " -> " + link);
    }
    return tid;
  }
}
