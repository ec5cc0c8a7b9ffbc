package io.sparkgate.policy;

import io.grpc.StatusException;
import io.sparkgate.call.AuditEvent;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.call.RequestRewriter;
import io.sparkgate.call.Stage;
import io.sparkgate.forward.CallHook;
import io.sparkgate.grants.Access;
import io.sparkgate.grants.Verdict;
import io.sparkgate.inspect.Facts;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The decide stage: each request message's facts (from the inspect stage) are decided on by the policy in
 * force, the decision is recorded in the call, and the message is refused, forwarded, or rewritten by the
 * rewriter its rule names. The end of an AddArtifacts stream is decided on too. Fail closed throughout. With
 * OPA configured, what the local policy allows or rewrites is put to OPA as well ({@link OpaGate}), which may
 * refuse it; each message is then handled off the event loops, since asking is a network round trip.
 */
public final class DecideStage implements Stage {
  private static final Logger log = LoggerFactory.getLogger(DecideStage.class);

  private final PolicyEngine engine;
  private final Map<String, RequestRewriter> rewriters;
  private final boolean includeLiterals;
  private final DecisionCounts counts = new DecisionCounts();
  private final OpaGate opa;

  /**
   * @param rewriters the rewriters a rule's {@code rewriter:} may name
   * @param includeLiterals whether the audit record's plan summary keeps the SQL's literals
   */
  public DecideStage(
      PolicyEngine engine, Map<String, RequestRewriter> rewriters, boolean includeLiterals) {
    this(engine, rewriters, includeLiterals, null);
  }

  /** @param opa asked after the local policy allowed; null: only the local policy decides */
  DecideStage(
      PolicyEngine engine,
      Map<String, RequestRewriter> rewriters,
      boolean includeLiterals,
      OpaGate opa) {
    this.opa = opa;
    this.engine = engine;
    this.rewriters = Map.copyOf(rewriters);
    this.includeLiterals = includeLiterals;
  }

  /** Every decision so far, by outcome and rule. */
  DecisionCounts counts() {
    return counts;
  }

  @Override
  public CallHook open(Call call) {
    return new Deciding(call);
  }

  /** Whether OPA is asked, so that request messages must be handled off the event loops. */
  public boolean asksOpa() {
    return opa != null;
  }

  /** The client asking OPA, for its meters; null without OPA. */
  io.sparkgate.opa.OpaClient opaClient() {
    return opa == null ? null : opa.client();
  }

  /** Stops asking OPA (its client's threads); the stage is not used after. */
  void close() {
    if (opa != null) opa.close();
  }

  private final class Deciding implements CallHook {
    private final Call call;

    /** The facts of the call's first message, summarized by the audit writer while it is the only one. */
    private Facts first;

    /** From the second message on, the summary is built here as they come (a stream can be long). */
    private PlanSummary summary;

    Deciding(Call call) {
      this.call = call;
    }

    @Override
    public byte[] onRequest(byte[] message) throws StatusException {
      try {
        Facts facts = engine.enrich(call.facts());
        Decision d = decideAndRecord(facts, true);
        switch (d.effect()) {
          case DENY -> throw Refusals.toException(d);
          case REWRITE -> {
            return rewrite(d, message, facts);
          }
          default -> {
            return message;
          }
        }
      } catch (StatusException e) {
        throw e;
      } catch (RuntimeException | StackOverflowError e) {
        log.error("{}: policy stage failed; refusing the call", call.method(), e);
        throw refuse(PolicyEngine.internalError());
      }
    }

    private byte[] rewrite(Decision d, byte[] message, Facts facts) throws StatusException {
      RequestRewriter r = rewriters.get(d.rewriter());
      if (r == null) throw refuse(PolicyEngine.internalError());
      RequestRewriter.Result result;
      try {
        result = r.rewrite(call.method(), message, facts, engine.profile(), call.session());
      } catch (StatusException cannot) {
        // What the rewriter cannot rewrite safely is refused under the same rule, Spark-style.
        Decision refused = d.refusedBecause(cannot.getStatus());
        counts.countOutcome(refused);
        call.decided(refused.effect().label(), refused.rule());
        call.audit().refusal(Refusals.text(refused));
        throw Refusals.toException(refused);
      }
      counts.countOutcome(d);
      call.audit().rewrite(new AuditEvent.Rewrite(d.rule(), d.rewriter(), result.description()));
      return result.request();
    }

    @Override
    public void onHalfClose() throws StatusException {
      if (!"AddArtifacts".equals(call.method())) return;
      try {
        Facts facts = call.facts(); // the inspect stage's facts of the end of the stream
        if (facts.size() == 0) return;
        // The end of the stream adds only what its messages, each put to OPA, did not finish: the
        // local
        // policy decides it alone, inline (the event loop that read the end may not wait).
        Decision d = decideAndRecord(engine.enrich(facts), false);
        if (d.refused()) throw Refusals.toException(d);
      } catch (StatusException e) {
        throw e;
      } catch (RuntimeException e) {
        log.error("{}: policy stage failed at the end of the stream; refusing", call.method(), e);
        throw refuse(PolicyEngine.internalError());
      }
    }

    /** @param askOpa whether OPA (when configured) has a say: on request messages, handled off the loops */
    private Decision decideAndRecord(Facts facts, boolean askOpa) {
      Principal principal = call.principal();
      Decision d =
          engine.decide(
              call.method(),
              principal == null ? call.head().userId() : principal.name(),
              principal == null ? List.of() : principal.groups(),
              principal == null ? "" : principal.tenant().orElse(""),
              facts);
      if (opa != null && askOpa && !d.refused()) {
        d = opa.check(call, d, facts, engine.profile(), counts);
      }
      if (d.effect() == Effect.REWRITE) {
        // Counted once its rewrite is known to succeed, or as the refusal it becomes otherwise.
        counts.countMatches(d);
      } else {
        counts.count(d);
      }
      call.decided(d.effect().label(), d.rule());
      AuditEvent audit = call.audit();
      for (String s : d.shadow()) audit.shadowDecision(s);
      for (String a : d.audits()) audit.auditRule(a);
      if (d.data() != null) audit.data(dataUses(d.data()));
      summarize(facts);
      if (d.refused()) {
        audit.refusal(Refusals.text(d));
        log.info(
            "{} refused by rule '{}' for {}",
            call.method(),
            d.rule(),
            principal == null ? "?" : principal.name());
      }
      return d;
    }

    /** What the grants checked, as the audit record lists it: allowed accesses, then the refused one. */
    private static List<AuditEvent.DataUse> dataUses(Verdict v) {
      List<AuditEvent.DataUse> out = new ArrayList<>(v.granted().size() + 1);
      for (Verdict.Granted g : v.granted()) out.add(use(g.access(), g.grant()));
      if (v.refused() != null) out.add(use(v.refused(), null));
      return out;
    }

    private static AuditEvent.DataUse use(Access a, String grant) {
      String target =
          switch (a.target()) {
            case TABLE -> "table";
            case PATH -> "path";
            case NAMESPACE, NAMESPACE_LISTING -> "namespace";
          };
      return new AuditEvent.DataUse(target, a.qualified(), a.privilege().label(), grant);
    }

    /**
     * The plan summary for the audit record. A call's first message (for most calls the only one) is
     * summarized by the audit writer from its immutable facts: redacting the SQL's literals and building the
     * summary are then off the call's path.
     */
    private void summarize(Facts facts) {
      if (first == null) {
        first = facts;
        call.audit()
            .planSummary(
                () -> new PlanSummary(includeLiterals, engine.secrets()).add(facts).toMap());
        return;
      }
      if (summary == null) {
        summary = new PlanSummary(includeLiterals, engine.secrets()).add(first);
      }
      Map<String, Object> now = summary.add(facts).toMap();
      call.audit().planSummary(() -> now);
    }

    /** Asking OPA is a round trip: with it, every request message is handled on the call executor. */
    @Override
    public boolean mayBlock(byte[] message) {
      return opa != null;
    }

    private StatusException refuse(Decision d) {
      counts.count(d);
      call.decided(d.effect().label(), d.rule());
      return Refusals.toException(d);
    }
  }
}
