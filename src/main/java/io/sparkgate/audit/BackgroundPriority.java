package io.sparkgate.audit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells Linux's scheduler which of the proxy's own threads can wait, since Java's thread priorities never reach
 * it. Two kinds of background work:
 *
 * <ul>
 *   <li>work that may lag, as {@code SCHED_IDLE} (or at nice 19 where that cannot be set), so it runs only in
 *       what the event loops leave over: compressing a rotated audit file is a burst of 0.1-1 s of one core
 *       (16-100 MiB at deflate's fastest level), and at the default priority that burst took a core from the
 *       event loops for its whole length. At nice 19 the scheduler still lets it finish a slice (up to about
 *       0.7 ms on Linux 6.6+) before an event loop woken on its core may run; an idle-policy thread gives the
 *       core up as soon as anything else wants it. A thread cannot leave {@code SCHED_IDLE} again without
 *       privilege, so only work that may wait indefinitely goes there for good; the audit writer idles only
 *       where it can be moved back ({@link AdaptiveWriter}): always idle, it fell behind a saturated proxy and
 *       dropped records (bench/README.md, eighteenth round);
 *   <li>work that must keep up but should never interrupt a call, as {@code SCHED_BATCH}: the thread keeps
 *       its full share of CPU, but the scheduler takes it for CPU-bound and does not let it preempt a running
 *       thread when it wakes (the audit writer, woken every few milliseconds while calls come).
 * </ul>
 *
 * <p>Linux keeps a nice value and a policy per thread, and {@code renice -p} or {@code chrt -p} given a thread
 * id change that thread only; lowering one's own priority, moving between {@code SCHED_OTHER} and
 * {@code SCHED_BATCH}, or moving to {@code SCHED_IDLE}, needs no privilege. Elsewhere (where they would
 * change the whole process), or without the program, the thread keeps its scheduling and a log line says why.
 */
final class BackgroundPriority {
  private static final Logger log = LoggerFactory.getLogger(BackgroundPriority.class);
  static final int NICE = 19;
  /** Absolute paths only: the proxy runs no program found through its environment. */
  private static final List<Path> RENICE = List.of(Path.of("/usr/bin/renice"), Path.of("/bin/renice"));
  private static final List<Path> CHRT = List.of(Path.of("/usr/bin/chrt"), Path.of("/bin/chrt"));
  private static final Path THREAD_SELF = Path.of("/proc/thread-self");

  private BackgroundPriority() {}

  /** Lowers the calling thread's priority to nice 19; false (and a log line saying why) when it could not. */
  static boolean lowerCurrentThread() {
    return apply(RENICE, List.of("-n", Integer.toString(NICE), "-p"), "nice " + NICE);
  }

  /** Moves the calling thread to {@code SCHED_BATCH}; false (and a log line saying why) when it could not. */
  static boolean batchCurrentThread() {
    return apply(CHRT, List.of("--batch", "-p", "0"), "SCHED_BATCH");
  }

  /**
   * Moves the calling thread to {@code SCHED_IDLE}, for good (leaving it needs privilege); false (and a log
   * line saying why) when it could not.
   */
  static boolean idleCurrentThread() {
    return apply(CHRT, List.of("--idle", "-p", "0"), "SCHED_IDLE");
  }

  /** Moves the thread with kernel id {@code tid} (of this process) to {@code SCHED_BATCH}. */
  static boolean batchThread(String tid) {
    return apply(CHRT, List.of("--batch", "-p", "0"), "SCHED_BATCH", tid);
  }

  /** Runs the first of {@code programs} that exists with {@code args} and the calling thread's id. */
  private static boolean apply(List<Path> programs, List<String> args, String what) {
    return apply(programs, args, what, null);
  }

  /** The same for the thread {@code target} (null: the calling thread). */
  private static boolean apply(List<Path> programs, List<String> args, String what, String target) {
    String thread = Thread.currentThread().getName();
    if (!System.getProperty("os.name", "").startsWith("Linux")) {
      log.debug("{}: keeps its scheduling (per-thread scheduling is Linux only)", thread);
      return false;
    }
    Path program = programs.stream().filter(Files::isExecutable).findFirst().orElse(null);
    if (program == null) {
      log.info("{}: no {} in /usr/bin or /bin; the thread keeps its scheduling", thread,
          programs.get(0).getFileName());
      return false;
    }
    try {
      String tid = target != null ? target : threadId();
      List<String> command = new ArrayList<>();
      command.add(program.toString());
      command.addAll(args);
      command.add(tid);
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      p.getOutputStream().close();
      if (!p.waitFor(5, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        log.info("{}: {} did not finish; the thread keeps its scheduling", thread, program.getFileName());
        return false;
      }
      if (p.exitValue() != 0) {
        // A line or two at most: it fits the pipe, so reading after the exit cannot block.
        String output = new String(p.getInputStream().readAllBytes()).trim();
        log.info("{}: {} failed ({}); the thread keeps its scheduling", thread, program.getFileName(), output);
        return false;
      }
      log.debug("{}: thread {} now runs at {}", thread, tid, what);
      return true;
    } catch (IOException e) {
      log.info("{}: could not change the thread's scheduling ({}); it keeps it", thread, e.toString());
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
