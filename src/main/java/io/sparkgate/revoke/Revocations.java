package io.sparkgate.revoke;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.sparkgate.call.Stage;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.redis.Redis;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The principals and tokens cut off, as this replica knows them: read on every call from memory, refreshed
 * from the store every {@link #POLL} (so a revocation made through another replica is in force here within
 * that) and at once after a write through this one. Listeners hear of each principal newly revoked, wherever
 * it was revoked, to interrupt and release what that principal runs through this replica.
 */
public final class Revocations implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Revocations.class);

  /** How stale a replica's view of another replica's revocations may be. */
  static final Duration POLL = Duration.ofMillis(200);

  /** When the sessions of a principal just revoked are looked for a second time. */
  static final Duration SWEEP_AGAIN = Duration.ofSeconds(2);

  private final RevocationStore store;
  private final String keptIn;
  private final DeniedTokens denied; // null without a denied_jti_file
  private final Clock clock;
  private final List<Consumer<Revocation>> listeners = new CopyOnWriteArrayList<>();
  private final RevokeStage stage;
  private ScheduledExecutorService poller;
  // Acting on a revocation asks backends and waits for them: never on the poller, which must keep
  // reading.
  private final ScheduledExecutorService sweeper =
      Executors.newSingleThreadScheduledExecutor(daemon("sparkgate-revocation-sweeps"));

  private volatile Map<String, Revocation> current = Map.of();

  @GuardedBy("this")
  private long version = -1;

  @GuardedBy("this")
  private long failures;

  Revocations(RevocationStore store, String keptIn, DeniedTokens denied, Clock clock) {
    this.store = store;
    this.keptIn = keptIn;
    this.denied = denied;
    this.clock = clock;
    this.stage = new RevokeStage(this);
  }

  /**
   * Reads the revocations kept (in Redis when {@code redis} is given, else in the state file or memory) and
   * polls them from now on.
   *
   * @throws IOException when the denied jti file or the state file cannot be read
   */
  public static Revocations start(AuthConfig.Revocations config, Redis redis, Clock clock)
      throws IOException {
    RevocationStore store;
    String keptIn;
    if (redis != null) {
      store = new RedisStore(redis);
      keptIn = "redis";
    } else {
      try {
        store = new MemoryStore(config.stateFile());
      } catch (IllegalArgumentException e) {
        throw new IOException(e.getMessage(), e);
      }
      keptIn = config.stateFile().map(f -> "file " + f).orElse("memory");
      if (config.stateFile().isEmpty()) {
        log.info(
            "revocations are kept in memory: a restart forgets them (set"
                + " auth.revocations.state_file, or share sessions through Redis)");
      }
    }
    DeniedTokens denied =
        config.deniedJtiFile().isPresent() ? new DeniedTokens(config.deniedJtiFile().get()) : null;
    Revocations r = new Revocations(store, keptIn, denied, clock);
    r.refresh();
    int n = r.active().size();
    if (n > 0) log.warn("{} revocations in force (kept in {})", n, keptIn);
    r.poller = Executors.newSingleThreadScheduledExecutor(daemon("sparkgate-revocations"));
    r.poller.scheduleWithFixedDelay(
        r::poll, POLL.toMillis(), POLL.toMillis(), TimeUnit.MILLISECONDS);
    return r;
  }

  /** The stage that refuses the calls of revoked principals and tokens; just after authentication. */
  public Stage stage() {
    return stage;
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return task -> {
      Thread t = new Thread(task, name);
      t.setDaemon(true);
      return t;
    };
  }

  /** Tells {@code listener}, on a thread of its own, of each principal newly revoked. */
  public void onRevoked(Consumer<Revocation> listener) {
    listeners.add(listener);
  }

  /** The revocation of this principal in force now, if any. */
  public Optional<Revocation> principal(String name) {
    return active(Revocation.Kind.PRINCIPAL, name);
  }

  /** The revocation of this JWT id in force now, if any: by the API or the denied jti file. */
  public Optional<Revocation> token(String jti) {
    Optional<Revocation> r = active(Revocation.Kind.TOKEN, jti);
    if (r.isPresent() || denied == null || !denied.contains(jti)) return r;
    return Optional.of(
        new Revocation(
            Revocation.Kind.TOKEN,
            jti,
            "listed in " + denied.file(),
            Optional.empty(),
            "denied_jti_file",
            Instant.EPOCH));
  }

  private Optional<Revocation> active(Revocation.Kind kind, String name) {
    Map<String, Revocation> now = current;
    if (now.isEmpty()) return Optional.empty(); // nearly always: no key to build on the call's path
    Revocation r = now.get(Revocation.id(kind, name));
    return r != null && r.activeAt(clock.instant()) ? Optional.of(r) : Optional.empty();
  }

  /**
   * Revokes now, on every replica: kept in the store first, so that an answer of success means it is kept.
   * {@code kept} hears of it once kept and before this replica acts on it, so that the audit log has the
   * revocation before what it caused.
   *
   * @throws RuntimeException when the store cannot keep it (Redis away, the state file not writable)
   */
  public Revocation revoke(
      Revocation.Kind kind,
      String name,
      String reason,
      Optional<Instant> until,
      String operator,
      Consumer<Revocation> kept) {
    Revocation r = new Revocation(kind, name, reason, until, operator, clock.instant());
    store.put(r);
    kept.accept(r);
    refresh();
    return r;
  }

  /** Ends the revocation of this principal or token; what it ended, if there was one. */
  public Optional<Revocation> restore(Revocation.Kind kind, String name) {
    String id = Revocation.id(kind, name);
    Revocation before = current.get(id);
    boolean removed = store.remove(id);
    refresh();
    return removed ? Optional.ofNullable(before) : Optional.empty();
  }

  /** The revocations in force, newest first (not the denied jti file's ids: {@link #deniedTokens}). */
  public List<Revocation> active() {
    Instant now = clock.instant();
    List<Revocation> out = new ArrayList<>();
    for (Revocation r : current.values()) if (r.activeAt(now)) out.add(r);
    out.sort(Comparator.comparing((Revocation r) -> r.at()).reversed().thenComparing(r -> r.id()));
    return out;
  }

  /** How many JWT ids the denied jti file lists. */
  public int deniedTokens() {
    return denied == null ? 0 : denied.size();
  }

  /** Where revocations are kept: {@code redis}, {@code file <path>} or {@code memory}. */
  public String keptIn() {
    return keptIn;
  }

  /** Calls refused because their principal, or their token, was revoked. */
  public long refused(Revocation.Kind kind) {
    return stage.refused(kind);
  }

  private void poll() {
    try {
      if (denied != null) denied.refresh();
      refresh();
    } catch (RuntimeException e) {
      long n;
      synchronized (this) {
        n = ++failures;
      }
      // The revocations read last stay in force; Redis away also stops new sessions, so little
      // passes.
      if (n == 1 || n % 300 == 0) {
        log.warn("cannot read revocations from {} ({} failures): {}", keptIn, n, e.toString());
      }
    }
  }

  /** Reads the store if it changed, and tells the listeners of principals newly revoked. */
  void refresh() {
    List<Revocation> fresh = new ArrayList<>();
    synchronized (this) {
      long v = store.version();
      if (v == version) return;
      RevocationStore.Snapshot s = store.load();
      boolean first = version == -1; // at start: nothing runs yet, nothing to act on
      Map<String, Revocation> before = current;
      for (Revocation r : s.all().values()) {
        Revocation old = before.get(r.id());
        if (!first
            && r.kind() == Revocation.Kind.PRINCIPAL
            && (old == null || !old.at().equals(r.at()))) {
          fresh.add(r);
        }
      }
      current = Map.copyOf(s.all());
      version = s.version();
      failures = 0;
    }
    for (Revocation r : fresh) {
      if (!r.activeAt(clock.instant())) continue;
      log.warn(
          "principal {} revoked by {} ({}){}",
          r.name(),
          r.operator(),
          r.reason(),
          r.until().map(u -> " until " + u).orElse(""));
      act(r);
      // A call that passed the check just before the revocation may open its session after this
      // sweep:
      // a second one, a little later, stops it too.
      if (poller != null) {
        poller.schedule(() -> act(r), SWEEP_AGAIN.toMillis(), TimeUnit.MILLISECONDS);
      }
    }
  }

  private void act(Revocation r) {
    // Restored (or ended) meanwhile: nothing to act on.
    if (!r.equals(current.get(r.id())) || !r.activeAt(clock.instant())) return;
    for (Consumer<Revocation> l : listeners) {
      try {
        l.accept(r);
      } catch (RuntimeException e) {
        log.warn("acting on the revocation of {} failed", r.name(), e);
      }
    }
  }

  @Override
  public void close() {
    if (poller != null) poller.shutdownNow();
    sweeper.shutdownNow();
  }
}
