package io.sparkgate.quota;

import io.grpc.Status;
import io.sparkgate.call.SparkError;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * A call over one of its quotas, thrown inside the stage and turned into the client's error at its edge.
 * Without a stack trace: it is an answer, not a bug, and a principal over its rate can make many.
 */
final class QuotaExceeded extends Exception {
  private static final long serialVersionUID = 1L;

  /** Sent with a refused operation slot: how soon an operation typically ends is unknowable here. */
  static final long SLOT_RETRY_NANOS = 1_000_000_000L;

  private final Quota quota;
  private final long limit;
  private final String holder;
  private final long retryNanos;
  private final long seen;

  /**
   * @param holder the principal or tenant whose count it is
   * @param retryNanos when retrying could succeed; negative: it cannot
   * @param seen what was counted: the request's size for max_plan_bytes, else unused
   */
  QuotaExceeded(Quota quota, long limit, String holder, long retryNanos, long seen) {
    super(quota.label(), null, false, false);
    this.quota = quota;
    this.limit = limit;
    this.holder = holder;
    this.retryNanos = retryNanos;
    this.seen = seen;
  }

  Quota quota() {
    return quota;
  }

  /** What the client is shown: Spark's error shape with the quota, its limit and whose it is. */
  SparkError error() {
    String who = quota.scope() + " '" + holder + "'";
    String message =
        switch (quota) {
          case PRINCIPAL_PLAN_BYTES ->
              "The request is "
                  + seen
                  + " bytes, more than quota "
                  + quota.label()
                  + " allows ("
                  + limit
                  + " bytes) for "
                  + who
                  + ". Send a smaller request (write large local data to a table or upload it as an"
                  + " artifact), or ask an operator to raise the quota.";
          case PRINCIPAL_RATE, TENANT_RATE ->
              "Quota "
                  + quota.label()
                  + " exceeded: "
                  + who
                  + " may send "
                  + limit
                  + " requests a second. Retry after "
                  + Math.max(1, retryNanos / 1_000_000)
                  + " ms, slow down, or ask an operator to raise the quota.";
          case PRINCIPAL_OPERATIONS, TENANT_OPERATIONS ->
              "Quota "
                  + quota.label()
                  + " reached: "
                  + who
                  + " already runs "
                  + limit
                  + " operations at once. Retry when one has finished (or interrupt one), or ask an"
                  + " operator to raise the quota.";
        };
    return new SparkError(
        Status.Code.RESOURCE_EXHAUSTED,
        "SPARKGATE_QUOTA_EXCEEDED",
        message,
        // 54000 program_limit_exceeded: the request itself is too large, retrying will not help;
        // 53400 configuration_limit_exceeded: a configured limit on what runs now.
        quota == Quota.PRINCIPAL_PLAN_BYTES ? "54000" : "53400",
        Map.of("quota", quota.label(), "limit", Long.toString(limit), "scope", quota.scope()),
        retryNanos < 0 ? Optional.empty() : Optional.of(retryAfter(retryNanos)));
  }

  /** Rounded up to the millisecond, so that a client waiting that long finds what it waited for. */
  private static Duration retryAfter(long nanos) {
    return Duration.ofMillis(Math.max(1, (nanos + 999_999) / 1_000_000));
  }
}
