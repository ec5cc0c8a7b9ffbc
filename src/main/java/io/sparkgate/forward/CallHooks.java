package io.sparkgate.forward;

import io.grpc.Status;
import io.grpc.StatusException;
import java.util.ArrayList;
import java.util.List;

/** Composes hooks into one pipeline: requests pass through them in order, responses in reverse order. */
public final class CallHooks {
  private CallHooks() {}

  /** A factory whose calls run each factory's hook in turn; any of them may refuse the call. */
  public static CallHook.Factory chain(List<CallHook.Factory> factories) {
    List<CallHook.Factory> copy = List.copyOf(factories);
    if (copy.size() == 1) {
      return copy.get(0);
    }
    return (method, headers) -> {
      List<CallHook> hooks = new ArrayList<>(copy.size());
      for (CallHook.Factory factory : copy) {
        hooks.add(factory.newCall(method, headers));
      }
      return new Chained(List.copyOf(hooks));
    };
  }

  private static final class Chained implements CallHook {
    private final List<CallHook> hooks;

    Chained(List<CallHook> hooks) {
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
    public void onHalfClose() throws StatusException {
      for (CallHook hook : hooks) {
        hook.onHalfClose();
      }
    }

    @Override
    public Payload onResponse(Payload message) {
      Payload current = message;
      for (int i = hooks.size() - 1; i >= 0; i--) {
        Payload next = hooks.get(i).onResponse(current);
        if (next != current && current != message) {
          current.release(); // an intermediate replacement nobody will send
        }
        current = next;
      }
      return current;
    }

    @Override
    public void onClose(Status status) {
      for (CallHook hook : hooks) {
        hook.onClose(status);
      }
    }
  }
}
