package io.sparkgate.forward;

import io.grpc.Attributes;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Composes hooks into one pipeline: requests pass through them in order, responses in reverse order. */
public final class CallHooks {
  private CallHooks() {}

  /**
   * A factory whose calls run each factory's hook in turn; any of them may refuse the call. Chains given here
   * are flattened and pass-through factories and hooks left out: every call builds its pipeline, and every
   * message goes through it, so it holds only the hooks that do something.
   */
  public static CallHook.Factory chain(List<CallHook.Factory> factories) {
    List<CallHook.Factory> flat = new ArrayList<>();
    for (CallHook.Factory factory : factories) {
      if (factory instanceof Chain chain) {
        flat.addAll(Arrays.asList(chain.factories));
      } else if (factory != CallHook.Factory.PASS_THROUGH) {
        flat.add(factory);
      }
    }
    return switch (flat.size()) {
      case 0 -> CallHook.Factory.PASS_THROUGH;
      case 1 -> flat.get(0);
      default -> new Chain(flat.toArray(CallHook.Factory[]::new));
    };
  }

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

  private static final class Chain implements CallHook.Factory {
    private final CallHook.Factory[] factories;

    Chain(CallHook.Factory[] factories) {
      this.factories = factories;
    }

    @Override
    public CallHook newCall(MethodDescriptor<?, ?> method, Metadata headers)
        throws StatusException {
      return newCall(method, headers, Attributes.EMPTY);
    }

    @Override
    public CallHook newCall(MethodDescriptor<?, ?> method, Metadata headers, Attributes transport)
        throws StatusException {
      CallHook[] hooks = new CallHook[factories.length];
      int n = 0;
      for (CallHook.Factory factory : factories) {
        CallHook hook = factory.newCall(method, headers, transport);
        if (hook != CallHook.PASS_THROUGH) {
          hooks[n++] = hook;
        }
      }
      if (n <= 1) {
        return n == 0 ? CallHook.PASS_THROUGH : hooks[0];
      }
      return new Chained(n == hooks.length ? hooks : Arrays.copyOf(hooks, n));
    }
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
    public boolean mayBlock(byte[] message) {
      for (CallHook hook : hooks) {
        if (hook.mayBlock(message)) return true;
      }
      return false;
    }
  }
}
