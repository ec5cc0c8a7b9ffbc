package io.sparkgate.call;

import io.sparkgate.forward.CallHook;
import io.sparkgate.inspect.ArtifactTracker;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionTracker;
import io.sparkgate.inspect.SessionView;

/**
 * The inspect stage: each request message is decoded here, once, into the call's request head and facts, in
 * the session the {@link SessionTracker} knows for it; the stages after it read them from the {@link Call}.
 * The tracker learns only from messages every stage let through. AddArtifacts streams are read with one
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
      if (call.method().equals("ReleaseSession")) {
        sessions.forget(head.userId(), head.sessionId());
      } else if (!head.sessionId().isEmpty()) {
        sessions.observe(head.userId(), head.sessionId(), call.facts());
      }
    }

    @Override
    public void onHalfClose() {
      if (artifacts != null) {
        call.inspected(inspector.finishArtifacts(artifacts), session);
      }
    }
  }
}
