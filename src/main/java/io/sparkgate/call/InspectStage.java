package io.sparkgate.call;

import io.grpc.Status;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.inspect.ArtifactTracker;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionTracker;
import io.sparkgate.inspect.SessionView;

/**
 * The inspect stage: each request message is decoded here, once, into the call's request head and facts, in
 * the session the {@link SessionTracker} knows for it; the stages after it read them from the {@link Call}.
 * The tracker learns only from requests every stage let through and Spark then answered successfully (a USE
 * that Spark refuses changes nothing). AddArtifacts streams are read with one
 * tracker, and their end once more (an artifact begun and never finished). Without a session tracker (no
 * policy) only the request head is read, for the audit record.
 */
public final class InspectStage implements Stage {
  private final Inspector inspector;
  private final SessionTracker sessions; // null: the request head only

  private InspectStage(Inspector inspector, SessionTracker sessions) {
    this.inspector = inspector;
    this.sessions = sessions;
  }

  /** Full inspection, for the decide stage. */
  public static InspectStage full(Inspector inspector, SessionTracker sessions) {
    return new InspectStage(inspector, java.util.Objects.requireNonNull(sessions, "sessions"));
  }

  /** The request head only: for a proxy that records calls but has no policy to decide with. */
  public static InspectStage headOnly(Inspector inspector) {
    return new InspectStage(inspector, null);
  }

  @Override
  public CallHook open(Call call) {
    if (sessions == null) {
      return new CallHook() {
        @Override
        public byte[] onRequest(byte[] message) {
          call.inspected(inspector.head(call.method(), message), SessionView.DEFAULT);
          return message;
        }
      };
    }
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
    public byte[] onRequest(byte[] message) {
      Facts facts =
          inspector.inspect(
              call.method(),
              message,
              (userId, sessionId) -> {
                session = sessions.view(userId, sessionId);
                return session;
              },
              artifacts);
      call.inspected(facts, session);
      return message;
    }

    @Override
    public void onAccepted(byte[] forwarded) {
      RequestHead head = RequestHead.of(call.facts());
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
      reattachable = call.method().equals("ExecutePlan") && Answers.reattachable(forwarded);
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
        sessions.apply(pending);
        pending = null;
      } else if (reattachedTo != null && Answers.resultComplete(message)) {
        RequestHead h = reattachedTo;
        reattachedTo = null;
        sessions.applyParked(h.userId(), h.sessionId(), h.operationId());
      }
      return message;
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
        sessions.apply(change);
      } else if (reattachable
          && (status.isOk()
              || status.getCode() == Status.Code.UNAVAILABLE
              || status.getCode() == Status.Code.CANCELLED)) {
        sessions.park(operationId, change);
      } else {
        sessions.abandon(change);
      }
    }

    /**
     * A session this replica does not hold is read from the shared store, which may wait: such a message is
     * handled off the event loop. Asked before the authenticate stage stamped the user, so a session held
     * under the declared user but another principal would wait on the loop once; a call is never wrong for it.
     */
    @Override
    public boolean mayBlock(byte[] message) {
      if (!sessions.shared()) return false;
      RequestHead head = RequestHead.of(inspector.head(call.method(), message));
      return !sessions.holds(head.userId(), head.sessionId());
    }

    @Override
    public void onHalfClose() {
      if (artifacts != null) {
        call.inspected(inspector.finishArtifacts(artifacts), session);
      }
    }
  }
}
