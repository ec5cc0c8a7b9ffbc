package io.sparkgate.policy;

import io.sparkgate.inspect.BackendProfile;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The backend profile as known now: read from the backend at start and every refresh interval, with the
 * configured overrides applied. Null (unknown) until the first successful read, unless the configuration
 * pins both extensions and catalogs; rules that need it refuse meanwhile. A failed refresh keeps the last
 * known profile.
 */
public final class ProfileSource {
  private static final Logger log = LoggerFactory.getLogger(ProfileSource.class);
  private static final Duration RETRY = Duration.ofSeconds(5);

  private final Supplier<BackendProfile> reader;
  private final Overrides overrides;
  private final AtomicReference<BackendProfile> current = new AtomicReference<>();

  /** Configured values that win over what the backend reports (null: not configured). */
  public record Overrides(
      String sparkVersion,
      List<String> extensions,
      Map<String, String> catalogs,
      String defaultCatalog,
      String defaultFs) {
    public static final Overrides NONE = new Overrides(null, null, null, null, null);

    boolean complete() {
      return extensions != null && catalogs != null;
    }
  }

  public ProfileSource(Supplier<BackendProfile> reader, Overrides overrides) {
    this.reader = reader;
    this.overrides = overrides;
    if (overrides.complete()) current.set(apply(BackendProfile.UNKNOWN));
  }

  /** A source that always has this profile (tests, the CLI). */
  public static ProfileSource fixed(BackendProfile profile) {
    ProfileSource s = new ProfileSource(() -> profile, Overrides.NONE);
    s.current.set(profile);
    return s;
  }

  /** The profile, or null while unknown. */
  public BackendProfile current() {
    return current.get();
  }

  /** Reads once now; false (and the last profile kept) if the backend could not be asked. */
  public boolean refresh() {
    try {
      BackendProfile p = apply(reader.get());
      BackendProfile old = current.getAndSet(p);
      if (!p.equals(old)) {
        log.info(
            "backend profile: Spark {}, extensions {}, catalogs {}, default catalog {}, default file system {}",
            p.sparkVersion(),
            p.extensions(),
            p.catalogs(),
            p.defaultCatalog(),
            p.defaultFs());
      }
      return true;
    } catch (RuntimeException e) {
      log.warn(
          "cannot read the backend profile ({}); {}",
          e.toString(),
          current.get() == null
              ? "rules that depend on it refuse until it is known"
              : "keeping the last one");
      return false;
    }
  }

  /** Reads now and then every {@code interval}; retries every few seconds while the profile is unknown. */
  public void start(ScheduledExecutorService scheduler, Duration interval) {
    scheduler.execute(() -> loop(scheduler, interval));
  }

  private void loop(ScheduledExecutorService scheduler, Duration interval) {
    boolean ok = refresh();
    Duration next = ok || current.get() != null ? interval : RETRY;
    if (!scheduler.isShutdown())
      scheduler.schedule(() -> loop(scheduler, interval), next.toMillis(), TimeUnit.MILLISECONDS);
  }

  private BackendProfile apply(BackendProfile read) {
    return read.with(
        overrides.sparkVersion(),
        overrides.extensions(),
        overrides.catalogs(),
        overrides.defaultCatalog(),
        overrides.defaultFs());
  }
}
