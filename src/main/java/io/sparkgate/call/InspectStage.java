package io.sparkgate.call;

import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.inspect.ArtifactTracker;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.RequestHead;
import io.sparkgate.inspect.SessionStates;
import io.sparkgate.inspect.SessionTracker;
import io.sparkgate.inspect.SessionView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inspect stage: each request message's body is decoded here, once, into the call's facts, in the session
 * the {@link SessionTracker} knows for it; the stages after it read them from the {@link Call}.
 * The tracker learns only from requests every stage let through and Spark then answered successfully (a USE
 * that Spark refuses changes nothing). AddArtifacts streams are read with one
 * tracker, and their end once more (an artifact begun and never finished). The session and operation come
 * from the call's request head, read before route.
 */
public final class InspectStage implements Stage {
  private static final Logger log = LoggerFactory.getLogger(InspectStage.class);

  private final Inspector inspector;
  private final SessionTracker sessions;

  private InspectStage(Inspector inspector, SessionTracker sessions) {
    this.inspector = inspector;
    this.sessions = sessions;
  }

  /** Inspection in a pool's sessions, for its decide stage. */
  public static InspectStage full(Inspector inspector, SessionTracker sessions) {
    return new InspectStage(inspector, java.util.Objects.requireNonNull(sessions, "sessions"));
  }

  @Override
  public CallHook open(Call call) {
    return new Inspecting(call);
  }

  private final class Inspecting implements CallHook {
    private final Call call;
    private final ArtifactTracker artifacts;

    /** The session the latest message was inspected in; request-side thread only. */
    private SessionView session = SessionView.DEFAULT;

    /**
     * What the forwarded request changes in its session once Spark answered it successfully: set on the
     * request side before the request reaches the backend, taken on the response side.
     */
    private volatile SessionTracker.Change pending;

    /** Whether the pending change's request asked for a reattachable execution; set with it. */
    private volatile boolean reattachable;

    /** The pending change's operation; set with it. */
    private volatile String operationId = "";

    /** A ReattachExecute's head, while a parked change waits for its operation's answer. */
    private volatile RequestHead reattachedTo;

    Inspecting(Call call) {
      this.call = call;
      this.artifacts = "AddArtifacts".equals(call.method()) ? inspector.newArtifactTracker() : null;
    }

    @Override
    public byte[] onRequest(byte[] message) throws StatusException {
      Facts facts;
      try {
        facts =
            inspector.inspect(
                call.method(),
                message,
                (userId, sessionId) -> {
                  session = sessions.view(userId, sessionId);
                  return session;
                },
                artifacts);
        SessionTracker.requireRead(session);
      } catch (SessionStates.Unavailable e) {
        log.warn("{}: {}", call.method(), e.getMessage());
        throw new SparkError(
                Status.Code.UNAVAILABLE,
                "SPARKGATE_SESSION_STATE_UNAVAILABLE",
                "Sparkgate cannot read this session's state right now; retry shortly.",
                "08001",
                java.util.Map.of(),
                java.util.Optional.of(java.time.Duration.ofSeconds(1)))
            .toException();
      } catch (SessionStates.Lost e) {
        log.warn("{}: session state lost: {}", call.method(), e.getMessage());
        throw new SparkError(
                Status.Code.FAILED_PRECONDITION,
                "SPARKGATE_SESSION_STATE_LOST",
                "Sparkgate lost track of this session's state; start a new session.",
                "08003",
                java.util.Map.of(),
                java.util.Optional.empty())
            .toException();
      }
      call.inspected(facts, session);
      return message;
    }

    @Override
    public void onAccepted(byte[] forwarded) {
      RequestHead head = call.head();
      if (call.method().equals("ReattachExecute")) {
        // Reattached to an execution whose stream ended before its answer: the answer may come
        // here.
        reattachedTo =
            sessions.parked(head.userId(), head.sessionId(), head.operationId()) ? head : null;
        return;
      }
      SessionTracker.Change change =
          sessions.changes(call.method(), head.userId(), head.sessionId(), call.facts());
      if (change == null) return;
      // An ExecutePlan request is one message, so one change per call; anything else is unary.
      // A request the head could not read counts as reattachable: its change waits for a
      // ResultComplete.
      reattachable =
          call.method().equals("ExecutePlan") && (head.reattachable() || !head.readable());
      operationId = head.operationId();
      pending = change;
    }

    /**
     * A reattachable execution's last response is a ResultComplete, sent only once the operation finished
     * without error: the one reliable sign that it succeeded, since its stream may also end with OK early
     * (the server cuts long streams and the client reattaches). Applied here, before the client sees it.
     */
    @Override
    public Payload onResponse(Payload message) {
      if (pending != null && reattachable && Answers.resultComplete(message)) {
        SessionTracker.Change change = pending;
        pending = null;
        apply(() -> sessions.apply(change));
      } else if (reattachedTo != null && Answers.resultComplete(message)) {
        RequestHead h = reattachedTo;
        reattachedTo = null;
        apply(() -> sessions.applyParked(h.userId(), h.sessionId(), h.operationId()));
      }
      return message;
    }

    /** Applies an answered change; one the shared store failed to take is logged (the tracker refuses on). */
    private void apply(Runnable change) {
      try {
        change.run();
      } catch (SessionStates.Unavailable e) {
        log.error(
            "{}: Spark answered a change to session state that the shared store did not take; the"
                + " session is refused here from now on: {}",
            call.method(),
            e.getMessage());
      }
    }

    /**
     * Any other call succeeded when it closes with OK (a unary answer, a non-reattachable stream that ran to
     * its end); applied before the client sees the status, so its next call meets the new state. A
     * reattachable execution that ends without its ResultComplete (the server cuts streams after a while,
     * CACHE TABLE of a large table runs for long; or the connection broke) is answered on a ReattachExecute:
     * its change is parked for it. One that Spark failed is dropped.
     */
    @Override
    public void onClosing(Status status) {
      SessionTracker.Change change = pending;
      pending = null;
      if (change == null) return;
      if (status.isOk() && !reattachable) {
        apply(() -> sessions.apply(change));
      } else if (reattachable
          && (status.isOk()
              || status.getCode() == Status.Code.UNAVAILABLE
              || status.getCode() == Status.Code.CANCELLED)) {
        sessions.park(operationId, change);
      } else {
        apply(() -> sessions.abandon(change));
      }
    }

    /**
     * With a shared store, every message of a session reads it (and a cache operation claims there), which may
     * wait: such a message is handled off the event loop.
     */
    @Override
    public boolean mayBlock(byte[] message) {
      if (!sessions.shared()) return false;
      return !call.head().sessionId().isEmpty();
    }

    @Override
    public void onHalfClose() {
      if (artifacts != null) {
        call.inspected(inspector.finishArtifacts(artifacts), session);
      }
    }
  }
}
