package io.sparkgate.forward;

import io.grpc.Status;
import io.grpc.StatusException;
import java.util.List;

/** Composes hooks into one pipeline: requests pass through them in order, responses in reverse order. */
public final class CallHooks {
  private CallHooks() {}

  /** One hook running {@code hooks} in turn, leaving out pass-through ones. */
  public static CallHook of(List<CallHook> hooks) {
    CallHook[] kept =
        hooks.stream().filter(h -> h != CallHook.PASS_THROUGH).toArray(CallHook[]::new);
    return switch (kept.length) {
      case 0 -> CallHook.PASS_THROUGH;
      case 1 -> kept[0];
      default -> new Chained(kept);
    };
  }

  private static final class Chained implements CallHook {
    private final CallHook[] hooks;

    Chained(CallHook[] hooks) {
      this.hooks = hooks;
    }

    @Override
    public byte[] onRequest(byte[] message) throws StatusException {
      byte[] current = message;
      for (CallHook hook : hooks) {
        current = hook.onRequest(current);
      }
      return current;
    }

    @Override
    public void onAccepted(byte[] forwarded) {
      for (CallHook hook : hooks) {
        hook.onAccepted(forwarded);
      }
    }

    @Override
    public void onHalfClose() throws StatusException {
      for (CallHook hook : hooks) {
        hook.onHalfClose();
      }
    }

    @Override
    public Payload onResponse(Payload message) {
      Payload current = message;
      for (int i = hooks.length - 1; i >= 0; i--) {
        Payload next = hooks[i].onResponse(current);
        if (next != current && current != message) {
          current.release(); // an intermediate replacement nobody will send
        }
        current = next;
      }
      return current;
    }

    @Override
    public void onClosing(Status status) {
      for (CallHook hook : hooks) {
        hook.onClosing(status);
      }
    }

    @Override
    public void onClose(Status status) {
      for (CallHook hook : hooks) {
        hook.onClose(status);
      }
    }

    @Override
    public String backend() {
      for (CallHook hook : hooks) {
        String backend = hook.backend();
        if (backend != null) return backend;
      }
      return null;
    }

    @Override
    public void toBackend(io.grpc.Metadata headers) {
      for (CallHook hook : hooks) {
        hook.toBackend(headers);
      }
    }

    @Override
    public boolean mayBlock(byte[] message) {
      for (CallHook hook : hooks) {
        if (hook.mayBlock(message)) return true;
      }
      return false;
    }
  }
}
