package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.Status;
import io.grpc.StatusException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

final class CallHooksTest {
  private final List<String> seen = new ArrayList<>();

  /** A hook that appends its name to each request and notes every event. */
  private CallHook named(String name) {
    return new CallHook() {
      @Override
      public byte[] onRequest(byte[] message) {
        seen.add(name + ".request");
        return (new String(message) + name).getBytes();
      }

      @Override
      public Payload onResponse(Payload message) {
        seen.add(name + ".response");
        return message;
      }

      @Override
      public void onClose(Status status) {
        seen.add(name + ".close");
      }
    };
  }

  @Test
  void nestedHooks_runAsOne_requestsInOrder_responsesInReverse() throws Exception {
    CallHook inner = CallHooks.of(List.of(named("a"), named("b")));
    CallHook hook = CallHooks.of(List.of(inner, CallHook.PASS_THROUGH, named("c")));

    assertArrayEquals("-abc".getBytes(), hook.onRequest("-".getBytes()));
    Payload response = Payload.of(new byte[] {1});
    assertSame(response, hook.onResponse(response));
    hook.onClose(Status.OK);
    assertEquals(
        List.of(
            "a.request",
            "b.request",
            "c.request",
            "c.response",
            "b.response",
            "a.response",
            "a.close",
            "b.close",
            "c.close"),
        seen);
  }

  /** Every call builds its hook and every message goes through it: only hooks that do something stay. */
  @Test
  void passThroughHooks_areLeftOut() {
    CallHook only = named("a");
    assertSame(only, CallHooks.of(List.of(CallHook.PASS_THROUGH, only, CallHook.PASS_THROUGH)));
    assertSame(CallHook.PASS_THROUGH, CallHooks.of(List.of(CallHook.PASS_THROUGH)));
    assertSame(CallHook.PASS_THROUGH, CallHooks.of(List.of()));
  }

  @Test
  void aRefusal_stopsTheRequestBeforeLaterHooks() {
    CallHook refuse =
        new CallHook() {
          @Override
          public byte[] onRequest(byte[] message) throws StatusException {
            throw Status.PERMISSION_DENIED.asException();
          }
        };
    CallHook hook = CallHooks.of(List.of(named("a"), refuse, named("b")));
    StatusException e = assertThrows(StatusException.class, () -> hook.onRequest(new byte[0]));
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    assertEquals(List.of("a.request"), seen);
  }
}
