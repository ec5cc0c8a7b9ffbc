package io.sparkgate.policy;

import com.google.protobuf.CodedInputStream;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.StatusException;
import io.sparkgate.audit.CallEvidence;
import io.sparkgate.auth.Principal;
import io.sparkgate.forward.CallHook;
import io.sparkgate.inspect.ArtifactTracker;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionTracker;
import io.sparkgate.inspect.SessionView;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The policy stage of every proxied call: each request message is inspected, decided on, recorded in the
 * call's audit evidence, and then refused or forwarded (possibly rewritten). AddArtifacts streams are
 * inspected message by message with one tracker, and once more at the end of the stream. The session
 * tracker learns only from requests that were let through. Fail closed throughout.
 */
public final class PolicyHook implements CallHook.Factory {
  private static final Logger log = LoggerFactory.getLogger(PolicyHook.class);
  /** Wire tags of length-delimited fields 1 and 2: (field << 3) | 2. */
  private static final int LEN_1 = (1 << 3) | 2;
  private static final int LEN_2 = (2 << 3) | 2;

  private final Inspector inspector;
  private final SessionTracker sessions;
  private final PolicyEngine engine;
  private final Map<String, RequestRewriter> rewriters;
  private final boolean includeLiterals;
  private final DecisionCounts counts = new DecisionCounts();

  public PolicyHook(Inspector inspector, SessionTracker sessions, PolicyEngine engine,
      Map<String, RequestRewriter> rewriters, boolean includeLiterals) {
    this.inspector = inspector;
    this.sessions = sessions;
    this.engine = engine;
    this.rewriters = Map.copyOf(rewriters);
    this.includeLiterals = includeLiterals;
  }

  /** Every decision so far, by outcome and rule. */
  DecisionCounts counts() {
    return counts;
  }

  @Override
  public CallHook newCall(MethodDescriptor<?, ?> method, Metadata headers) {
    return new Call(method.getBareMethodName(), Principal.current(), CallEvidence.current());
  }

  private final class Call implements CallHook {
    private final String rpc;
    private final Principal principal;
    private final CallEvidence evidence;
    /** The facts of the call's first message, summarized by the audit writer while it is the only one. */
    private Facts first;
    /** From the second message on, the summary is built here as they come (a stream can be long). */
    private PlanSummary summary;
    private final ArtifactTracker artifacts;
    private String userId = "";
    private String sessionId = "";

    Call(String rpc, Principal principal, CallEvidence evidence) {
      this.rpc = rpc == null ? "" : rpc;
      this.principal = principal;
      this.evidence = evidence;
      this.artifacts = "AddArtifacts".equals(rpc) ? inspector.newArtifactTracker() : null;
    }

    @Override
    public byte[] onRequest(byte[] message) throws StatusException {
      try {
        readIdentity(message);
        SessionView view = sessions.view(userId, sessionId);
        Facts facts = engine.enrich(inspector.inspect(rpc, message, view, artifacts));
        Decision d = decideAndRecord(facts);
        switch (d.effect()) {
          case DENY -> throw Refusals.toException(d);
          case REWRITE -> {
            RequestRewriter r = rewriters.get(d.rewriter());
            if (r == null) throw refuse(PolicyEngine.internalError());
            RequestRewriter.Result result;
            try {
              result = r.rewrite(message, facts, engine.profile(), view);
            } catch (StatusException cannot) {
              // What the rewriter cannot rewrite safely is refused under the same rule, Spark-style.
              Decision refused = d.refusedBecause(cannot.getStatus());
              counts.countOutcome(refused);
              evidence.put("decision", refused.effect().label());
              evidence.put("refusal", Refusals.text(refused));
              throw Refusals.toException(refused);
            }
            counts.countOutcome(d);
            evidence.add("rewrites", Map.of("rule", d.rule(), "rewriter", d.rewriter(), "change", result.description()));
            allowed(facts);
            return result.request();
          }
          default -> {
            allowed(facts);
            return message;
          }
        }
      } catch (StatusException e) {
        throw e;
      } catch (RuntimeException | StackOverflowError e) {
        log.error("{}: policy stage failed; refusing the call", rpc, e);
        throw refuse(PolicyEngine.internalError());
      }
    }

    @Override
    public void onHalfClose() throws StatusException {
      if (artifacts == null) return;
      try {
        Facts facts = inspector.finishArtifacts(artifacts);
        if (facts.size() == 0) return;
        Decision d = decideAndRecord(engine.enrich(facts));
        if (d.refused()) throw Refusals.toException(d);
      } catch (StatusException e) {
        throw e;
      } catch (RuntimeException e) {
        log.error("{}: policy stage failed at the end of the stream; refusing", rpc, e);
        throw refuse(PolicyEngine.internalError());
      }
    }

    private Decision decideAndRecord(Facts facts) {
      Decision d = engine.decide(rpc, principal == null ? userId : principal.name(),
          principal == null ? List.of() : principal.groups(),
          principal == null ? "" : principal.tenant().orElse(""), facts);
      if (d.effect() == Effect.REWRITE) {
        // Counted once its rewrite is known to succeed, or as the refusal it becomes otherwise.
        counts.countMatches(d);
      } else {
        counts.count(d);
      }
      evidence.put("decision", d.effect().label());
      evidence.put("rule", d.rule());
      for (String s : d.shadow()) evidence.add("shadow_decisions", s);
      for (String a : d.audits()) evidence.add("audit_rules", a);
      summarize(facts);
      if (d.refused()) {
        evidence.put("refusal", Refusals.text(d));
        log.info("{} refused by rule '{}' for {}", rpc, d.rule(), principal == null ? "?" : principal.name());
      }
      return d;
    }

    /**
     * The plan summary for the audit record. A call's first message (for most calls the only one) is
     * summarized by the audit writer from its immutable facts: redacting the SQL's literals and building the
     * summary are then off the call's path.
     */
    private void summarize(Facts facts) {
      if (first == null) {
        first = facts;
        evidence.putLater("plan_summary", () -> new PlanSummary(includeLiterals).add(facts).toMap());
        return;
      }
      if (summary == null) {
        summary = new PlanSummary(includeLiterals).add(first);
      }
      evidence.put("plan_summary", summary.add(facts).toMap());
    }

    private StatusException refuse(Decision d) {
      counts.count(d);
      evidence.put("decision", d.effect().label());
      evidence.put("rule", d.rule());
      return Refusals.toException(d);
    }

    private void allowed(Facts facts) {
      if (rpc.equals("ReleaseSession")) {
        sessions.forget(userId, sessionId);
      } else if (!sessionId.isEmpty()) {
        sessions.observe(userId, sessionId, facts);
      }
    }

    /**
     * session_id (field 1) and user_context.user_id (field 2.1) of any Spark Connect request, read from the
     * wire so the session's state is known before inspection; unreadable input leaves them as they were
     * (inspection reports it).
     */
    private void readIdentity(byte[] message) {
      try {
        CodedInputStream in = CodedInputStream.newInstance(message);
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
          if (tag == LEN_1) {
            sessionId = in.readStringRequireUtf8();
          } else if (tag == LEN_2) {
            CodedInputStream uc = in.readBytes().newCodedInput();
            for (int t = uc.readTag(); t != 0; t = uc.readTag()) {
              if (t == LEN_1) userId = uc.readStringRequireUtf8();
              else uc.skipField(t);
            }
          } else {
            in.skipField(tag);
          }
        }
      } catch (IOException | RuntimeException e) {
        // Left to the inspector, which reports unparseable requests as UNCLASSIFIED.
      }
    }
  }
}
