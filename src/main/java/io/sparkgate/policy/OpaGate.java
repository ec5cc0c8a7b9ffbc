package io.sparkgate.policy;

import io.grpc.Status;
import io.sparkgate.call.AuditEvent;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Facts;
import io.sparkgate.opa.Answer;
import io.sparkgate.opa.OpaClient;
import io.sparkgate.opa.Question;
import java.util.Locale;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The decide stage's second opinion: what the local policy allowed (or rewrote) is put to OPA, whose refusal
 * replaces the local decision; OPA never turns a local refusal into an allow, since it is never asked about
 * one. What OPA said goes into the audit record with its decision id; an OPA that cannot answer is a refusal
 * under {@code on_error: deny}, and leaves the local decision standing under {@code allow}.
 */
final class OpaGate implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(OpaGate.class);

  /** The rule a refusal is recorded under when OPA could not answer and {@code on_error} is deny. */
  static final String UNAVAILABLE_RULE = "opa-unavailable";

  /** Rules OPA names are recorded as {@code opa:<rule>}, so they never pass for the local policy's own. */
  static final String RULE_PREFIX = "opa";

  static final String ERROR_CLASS_UNAVAILABLE = "SPARKGATE_POLICY_UNAVAILABLE";

  private final OpaClient client;
  private final boolean allowOnError;
  private final String pool;
  private final java.util.concurrent.atomic.AtomicLong lastWarning =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
  private final java.util.concurrent.atomic.LongAdder unlogged =
      new java.util.concurrent.atomic.LongAdder();

  private static final long WARN_EVERY_NANOS = 1_000_000_000L;

  OpaGate(OpaClient client, boolean allowOnError, String pool) {
    this.client = client;
    this.allowOnError = allowOnError;
    this.pool = pool;
  }

  /**
   * {@code local} if OPA agrees (or cannot answer, under {@code on_error: allow}), else OPA's refusal.
   * Blocks for at most the configured timeout: never call it on an event loop.
   */
  Decision check(
      Call call, Decision local, Facts facts, BackendProfile profile, DecisionCounts counts) {
    Answer a = client.ask(question(call, local, facts, profile));
    AuditEvent audit = call.audit();
    switch (a.outcome()) {
      case ALLOW -> {
        audit.opa(new AuditEvent.Opa(a.decisionId(), "allow", null, null, a.cached()));
        return local;
      }
      case DENY -> {
        String rule = a.rule() == null ? RULE_PREFIX : RULE_PREFIX + ":" + a.rule();
        audit.opa(new AuditEvent.Opa(a.decisionId(), "deny", rule, null, a.cached()));
        return new Decision(
            Effect.DENY,
            rule,
            a.reason() == null
                ? "The organization's policy service (OPA) does not allow this request."
                : a.reason(),
            Status.Code.PERMISSION_DENIED,
            Decision.ERROR_CLASS,
            Decision.SQL_STATE,
            null,
            local.shadow(),
            local.audits(),
            local.data());
      }
      default -> {
        counts.countOpaError();
        audit.opa(new AuditEvent.Opa(null, "error", null, a.reason(), false));
        warn(call.method(), a.reason());
        if (allowOnError) return local;
        return new Decision(
            Effect.DENY,
            UNAVAILABLE_RULE,
            "Sparkgate could not get a decision from its policy service (OPA); retry in a moment, and"
                + " tell the platform team if it persists.",
            // Not UNAVAILABLE: Spark's clients retry that silently for minutes before showing
            // anything.
            Status.Code.PERMISSION_DENIED,
            ERROR_CLASS_UNAVAILABLE,
            Decision.SQL_STATE,
            null,
            local.shadow(),
            local.audits(),
            local.data());
      }
    }
  }

  /**
   * An outage fails every message: one line per second at most, with how many went unlogged, rather than a
   * line per message.
   */
  private void warn(String method, String why) {
    long now = System.nanoTime();
    long last = lastWarning.get();
    if (now - last < WARN_EVERY_NANOS || !lastWarning.compareAndSet(last, now)) {
      unlogged.increment();
      return;
    }
    log.warn(
        "{}: OPA gave no decision ({}); on_error {} ({} more since the last such line)",
        method,
        why,
        allowOnError ? "allow: the local decision stands" : "deny: refused",
        unlogged.sumThenReset());
  }

  private Question question(Call call, Decision local, Facts facts, BackendProfile profile) {
    Principal p = call.principal();
    return new Question(
        call.method(),
        p == null ? call.head().userId() : p.name(),
        p == null ? java.util.List.of() : p.groups(),
        p == null ? Optional.empty() : p.tenant(),
        p == null ? "none" : p.method().name().toLowerCase(Locale.ROOT),
        pool,
        profile,
        facts,
        local.data(),
        local.effect().label(),
        local.rule());
  }

  OpaClient client() {
    return client;
  }

  @Override
  public void close() {
    client.close();
  }
}
