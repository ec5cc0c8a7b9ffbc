package io.sparkgate.policy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The policy in force, read from one file and reloaded when the file changes: the new file is compiled in
 * full and swapped in atomically; a file that does not compile is logged and the last good policy stays.
 */
public final class PolicyStore {
  private static final Logger log = LoggerFactory.getLogger(PolicyStore.class);

  private final Path file;
  private final PolicyCompiler compiler;
  private final AtomicReference<Policy> current = new AtomicReference<>();
  private volatile byte[] lastDigest;
  private volatile String lastError;

  /** Loads the file now; throws PolicyException if it does not compile (the proxy must not start). */
  public PolicyStore(Path file, PolicyCompiler compiler) {
    this.file = file;
    this.compiler = compiler;
    byte[] bytes = read();
    current.set(compiler.compile(file));
    lastDigest = digest(bytes);
    log.info("policy {} loaded: rules {}, default {}", file, current.get().ruleNames(), current.get().defaultEffect().label());
  }

  public Policy current() {
    return current.get();
  }

  /** The reason the file on disk is not in force, or null. */
  public String lastError() {
    return lastError;
  }

  /** Reloads if the file's content changed; true if a new policy was swapped in. */
  public boolean reload() {
    byte[] bytes;
    try {
      bytes = read();
    } catch (PolicyException e) {
      report(e.getMessage());
      return false;
    }
    byte[] d = digest(bytes);
    if (Arrays.equals(d, lastDigest)) return false;
    try {
      Policy p = compiler.compile(file);
      current.set(p);
      lastDigest = d;
      lastError = null;
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
    log.error("policy {} NOT reloaded, keeping the last good policy: {}", file, why);
  }

  public void start(ScheduledExecutorService scheduler, Duration interval) {
    scheduler.scheduleWithFixedDelay(() -> {
      try {
        reload();
      } catch (RuntimeException e) {
        log.error("policy reload failed", e);
      }
    }, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  private byte[] read() {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new PolicyException(file + ": cannot read: " + e, e);
    }
  }

  private static byte[] digest(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
