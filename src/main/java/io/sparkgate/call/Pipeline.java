package io.sparkgate.call;

import io.grpc.Attributes;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.StatusException;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.CallHooks;
import java.util.ArrayList;
import java.util.List;

/**
 * The stages every Spark Connect call passes, in the order it meets them: for each new call one {@link Call}
 * is made and every stage opened on it, and their hooks are joined for the forwarding layer (requests in stage
 * order, responses in reverse). A stage that refuses at the start closes the stages opened before it with its
 * status, so the audit stage records the refusal.
 */
public final class Pipeline implements CallHook.Factory {
  private final Stage[] stages;

  private Pipeline(List<Stage> stages) {
    this.stages = stages.toArray(Stage[]::new);
  }

  public static Pipeline of(List<Stage> stages) {
    return new Pipeline(List.copyOf(stages));
  }

  public static Pipeline of(Stage... stages) {
    return of(List.of(stages));
  }

  @Override
  public CallHook newCall(MethodDescriptor<?, ?> method, Metadata headers, Attributes transport)
      throws StatusException {
    String name = method.getBareMethodName();
    return open(new Call(name == null ? method.getFullMethodName() : name, headers, transport));
  }

  /** Opens every stage on {@code call}: the hook of the whole call. */
  public CallHook open(Call call) throws StatusException {
    List<CallHook> hooks = new ArrayList<>(stages.length);
    for (Stage stage : stages) {
      CallHook hook;
      try {
        hook = stage.open(call);
      } catch (StatusException e) {
        for (CallHook opened : hooks) {
          opened.onClose(e.getStatus());
        }
        throw e;
      }
      hooks.add(hook);
    }
    return CallHooks.of(hooks);
  }
}
