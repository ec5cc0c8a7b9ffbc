package io.sparkgate.policy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The policy in force, read from one file (and the files it includes) and reloaded when any of them changes:
 * the policy is compiled again in full and swapped in atomically; one that does not compile is logged and the
 * last good policy stays.
 */
public final class PolicyStore {
  private static final Logger log = LoggerFactory.getLogger(PolicyStore.class);

  private final Path file;
  private final PolicyCompiler compiler;
  private final AtomicReference<Policy> current = new AtomicReference<>();
  private volatile byte[] lastDigest;
  private volatile String lastError;
  private volatile Instant loadedAt = Instant.now();
  private final AtomicLong reloads = new AtomicLong();
  private final AtomicLong rejected = new AtomicLong();

  /** Loads the file now; throws PolicyException if it does not compile (the proxy must not start). */
  public PolicyStore(Path file, PolicyCompiler compiler) {
    this.file = file;
    this.compiler = compiler;
    current.set(compiler.compile(file));
    lastDigest = digest(current.get().files());
    log.info(
        "policy {} loaded: rules {}, default {}",
        file,
        current.get().ruleNames(),
        current.get().defaultEffect().label());
  }

  public Policy current() {
    return current.get();
  }

  /** The reason the file on disk is not in force, or null. */
  public String lastError() {
    return lastError;
  }

  /** When the policy in force was loaded (at start, or by the last reload). */
  public Instant loadedAt() {
    return loadedAt;
  }

  /** Policies swapped in since start (not counting the first). */
  public long reloads() {
    return reloads.get();
  }

  /** Changed policies that did not compile, so the last good one stayed in force. */
  public long rejected() {
    return rejected.get();
  }

  /**
   * Reloads if the content of the file, or of a file the policy in force includes, changed; true if a new
   * policy was swapped in. (A file newly included by the changed one is read by the compilation.)
   */
  public boolean reload() {
    List<String> files = current.get().files();
    byte[] d = digest(files);
    if (Arrays.equals(d, lastDigest)) return false;
    try {
      Policy p = compiler.compile(file);
      current.set(p);
      // The digest taken before compiling, so that an edit made meanwhile is seen at the next
      // check; unless an include was added or removed, when the new set of files has to be digested
      // now.
      lastDigest = p.files().equals(files) ? d : digest(p.files());
      lastError = null;
      loadedAt = Instant.now();
      reloads.incrementAndGet();
      log.info("policy {} reloaded: rules {}", file, p.ruleNames());
      return true;
    } catch (PolicyException e) {
      lastDigest = d; // do not log the same broken file again on every check
      report(e.getMessage());
      return false;
    }
  }

  private void report(String why) {
    lastError = why;
    rejected.incrementAndGet();
    log.error("policy {} NOT reloaded, keeping the last good policy: {}", file, why);
  }

  public void start(ScheduledExecutorService scheduler, Duration interval) {
    scheduler.scheduleWithFixedDelay(
        () -> {
          try {
            reload();
          } catch (RuntimeException e) {
            log.error("policy reload failed", e);
          }
        },
        interval.toMillis(),
        interval.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /**
   * One digest over the files' names and contents, in order. A file that cannot be read counts as a change
   * rather than an error: the top file may have dropped the include, which only compiling it can tell.
   */
  private static byte[] digest(List<String> files) {
    MessageDigest md;
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    for (String f : files) {
      byte[] bytes;
      try {
        bytes = Files.readAllBytes(Path.of(f));
      } catch (IOException e) {
        bytes = new byte[0];
        md.update((byte) 1); // unreadable: differs from any content, the empty one included
      }
      md.update(f.getBytes(StandardCharsets.UTF_8));
      md.update((byte) 0);
      md.update(Long.toString(bytes.length).getBytes(StandardCharsets.UTF_8));
      md.update((byte) 0);
      md.update(bytes);
    }
    return md.digest();
  }
}
