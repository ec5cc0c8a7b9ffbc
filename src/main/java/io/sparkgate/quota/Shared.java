package io.sparkgate.quota;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.sparkgate.redis.Redis;
import io.sparkgate.redis.RedisUnavailableException;
import io.sparkgate.redis.Script;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The counts every replica shares, in Redis: per principal and per tenant a sorted set of the operations
 * holding a slot (scored by when their lease runs out) and a token bucket (a hash of its level and when that
 * was). Every change is one of the {@link Scripts}, atomic in Redis and timed by Redis's own clock, so
 * replicas' clocks do not matter. The keys share one hash tag: a script touches a principal's and its tenant's keys together.
 */
final class Shared {
  private static final Logger log = LoggerFactory.getLogger(Shared.class);
  private static final String PREFIX = "{sparkgate-quota}:";
  private static final String EPOCH = PREFIX + "epoch";

  /** Scripts send at most this many keys at once, so that Redis is never busy with one for long. */
  static final int BATCH = 256;

  private final Redis redis;
  private final long leaseMillis;

  /** This replica's proposal for the epoch, should it be the first to find Redis empty. */
  private final String epochCandidate = UUID.randomUUID().toString();

  private volatile boolean up = true;

  Shared(Redis redis, long leaseMillis) {
    this.redis = redis;
    this.leaseMillis = leaseMillis;
  }

  /** Whether Redis answered last time: the call path asks it only then. */
  boolean up() {
    return up;
  }

  /** Redis failed: until the background thread finds it back, every decision is local. Logged once. */
  void down(RedisUnavailableException e) {
    if (up) {
      up = false;
      log.warn(
          "Redis is unavailable: each replica enforces quotas alone until it is back ({})",
          e.getMessage());
    }
  }

  /** Redis answered the background thread again. */
  void back() {
    if (!up) {
      up = true;
      log.info("Redis is back: quotas are shared across replicas again");
    }
  }

  static String operationsKey(boolean tenant, String name) {
    return PREFIX + (tenant ? "ops:t:" : "ops:p:") + name;
  }

  static String bucketKey(boolean tenant, String name) {
    return PREFIX + (tenant ? "rate:t:" : "rate:p:") + name;
  }

  /** The outcome of a start: admitted with the buckets' levels after, or refused by one limit. */
  record Start(
      int refused, long limit, long retryMillis, double principalLevel, double tenantLevel) {}

  /**
   * One round trip: the start of an ExecutePlan as {@link Scripts#START} describes it.
   *
   * @param tenant null without a tenant
   * @throws RedisUnavailableException when Redis did not answer
   */
  Start start(String member, String principal, String tenant, Budget b) {
    boolean t = tenant != null;
    String[] keys = {
      operationsKey(false, principal),
      operationsKey(true, t ? tenant : ""),
      bucketKey(false, principal),
      bucketKey(true, t ? tenant : "")
    };
    String[] args = {
      member,
      Long.toString(leaseMillis),
      Integer.toString(b.principalOperations()),
      Integer.toString(t ? b.tenantOperations() : 0),
      Integer.toString(b.principalRate()),
      Integer.toString(b.principalBurst()),
      Integer.toString(t ? b.tenantRate() : 0),
      Integer.toString(t ? b.tenantBurst() : 0)
    };
    List<Object> r = redis.call(c -> run(c, Scripts.START, ScriptOutputType.MULTI, keys, args));
    long code = number(r, 0);
    if (code != 0) {
      return new Start((int) code, number(r, 1), number(r, 2), 0, 0);
    }
    return new Start(0, 0, 0, number(r, 1) / 1000.0, number(r, 2) / 1000.0);
  }

  /**
   * Renews the leases of {@code ops} (in both their sets), adding those not yet held; returns the epoch.
   * Blocks: for the background thread only.
   */
  String renew(List<Op> ops) {
    List<String> keys = new ArrayList<>();
    List<String> args = new ArrayList<>();
    keys.add(EPOCH);
    args.add(Long.toString(leaseMillis));
    args.add(epochCandidate);
    String epoch = null;
    for (Op op : ops) {
      String mode = op.shared() ? "xx" : "add";
      if (op.principal != null) {
        keys.add(operationsKey(false, op.principal.name));
        args.add(op.key);
        args.add(mode);
      }
      if (op.tenant != null) {
        keys.add(operationsKey(true, op.tenant.name));
        args.add(op.key);
        args.add(mode);
      }
      if (keys.size() > BATCH) {
        epoch = renewBatch(keys, args);
        keys.subList(1, keys.size()).clear();
        args.subList(2, args.size()).clear();
      }
    }
    String last = renewBatch(keys, args);
    return epoch == null ? last : epoch;
  }

  private String renewBatch(List<String> keys, List<String> args) {
    String[] k = keys.toArray(String[]::new);
    String[] a = args.toArray(String[]::new);
    return redis.call(c -> run(c, Scripts.RENEW, ScriptOutputType.VALUE, k, a));
  }

  /** Renews one operation without waiting (a reattach): adds it where it is not held yet. */
  CompletableFuture<String> renewSoon(Op op) {
    List<String> keys = new ArrayList<>(3);
    List<String> args = new ArrayList<>(6);
    keys.add(EPOCH);
    args.add(Long.toString(leaseMillis));
    args.add(epochCandidate);
    if (op.principal != null) {
      keys.add(operationsKey(false, op.principal.name));
      args.add(op.key);
      args.add("add");
    }
    if (op.tenant != null) {
      keys.add(operationsKey(true, op.tenant.name));
      args.add(op.key);
      args.add("add");
    }
    String[] k = keys.toArray(String[]::new);
    String[] a = args.toArray(String[]::new);
    return redis.send(c -> run(c, Scripts.RENEW, ScriptOutputType.VALUE, k, a));
  }

  /**
   * Reports calls admitted here since the last report and reads the buckets back: for each bucket key, the
   * count, rate and burst in {@code used}, {@code rates}, {@code bursts}; returns the levels after. Blocks.
   */
  double[] sync(String[] keys, long[] used, int[] rates, int[] bursts) {
    String[] args = new String[keys.length * 3];
    for (int i = 0; i < keys.length; i++) {
      args[3 * i] = Long.toString(used[i]);
      args[3 * i + 1] = Integer.toString(rates[i]);
      args[3 * i + 2] = Integer.toString(bursts[i]);
    }
    List<Object> r = redis.call(c -> run(c, Scripts.SYNC, ScriptOutputType.MULTI, keys, args));
    double[] levels = new double[keys.length];
    for (int i = 0; i < levels.length; i++) {
      levels[i] = number(r, i) / 1000.0;
    }
    return levels;
  }

  /** Gives an operation's slots back without waiting; a failure leaves them to their lease. */
  void release(String member, String principal, String tenant) {
    var unused =
        redis.send(
            c ->
                run(c, Scripts.RELEASE, ScriptOutputType.INTEGER, sets(principal, tenant), member));
  }

  /** Gives back the slots of every operation of one session, without waiting. */
  void releaseSession(String prefix, String principal, String tenant) {
    var unused =
        redis.send(
            c ->
                run(
                    c,
                    Scripts.RELEASE_SESSION,
                    ScriptOutputType.INTEGER,
                    sets(principal, tenant),
                    prefix));
  }

  private static String[] sets(String principal, String tenant) {
    return tenant == null
        ? new String[] {operationsKey(false, principal)}
        : new String[] {operationsKey(false, principal), operationsKey(true, tenant)};
  }

  /** Loads the scripts, so that the first ExecutePlan after a (re)start of Redis needs one round trip. */
  void load() {
    for (Script s : Scripts.ALL) {
      redis.call(c -> c.scriptLoad(s.text()));
    }
  }

  private static <T> CompletionStage<T> run(
      RedisAsyncCommands<String, String> c,
      Script s,
      ScriptOutputType type,
      String[] keys,
      String... args) {
    return s.run(c, type, keys, args);
  }

  private static long number(List<Object> reply, int i) {
    if (reply == null || reply.size() <= i || !(reply.get(i) instanceof Long n)) {
      throw new RedisUnavailableException("Redis answered a quota script unexpectedly: " + reply);
    }
    return n;
  }
}
