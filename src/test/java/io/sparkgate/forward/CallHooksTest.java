package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

final class CallHooksTest {
  private final List<String> seen = new ArrayList<>();

  /** A hook that appends its name to each request and notes every event. */
  private CallHook.Factory named(String name) {
    return (method, headers) ->
        new CallHook() {
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

  private static CallHook newCall(CallHook.Factory factory) throws StatusException {
    return factory.newCall(TestMethods.get("ExecutePlan"), new Metadata());
  }

  @Test
  void nestedChains_runAsOne_requestsInOrder_responsesInReverse() throws Exception {
    CallHook.Factory inner = CallHooks.chain(List.of(named("a"), named("b")));
    CallHook hook =
        newCall(CallHooks.chain(List.of(inner, CallHook.Factory.PASS_THROUGH, named("c"))));

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

  @Test
  void passThroughFactoriesAndHooks_areLeftOut() throws Exception {
    CallHook.Factory only = named("a");
    assertSame(
        only,
        CallHooks.chain(
            List.of(CallHook.Factory.PASS_THROUGH, only, CallHook.Factory.PASS_THROUGH)));
    assertSame(
        CallHook.Factory.PASS_THROUGH, CallHooks.chain(List.of(CallHook.Factory.PASS_THROUGH)));

    // A factory whose calls need nothing (identity hooks with authentication off) adds no hook to
    // the call.
    CallHook real = new CallHook() {};
    CallHook.Factory idle = (method, headers) -> CallHook.PASS_THROUGH;
    assertSame(real, newCall(CallHooks.chain(List.of(idle, (method, headers) -> real))));
    assertSame(CallHook.PASS_THROUGH, newCall(CallHooks.chain(List.of(idle, idle))));
  }

  @Test
  void aRefusal_stopsTheRequestBeforeLaterHooks() throws Exception {
    CallHook.Factory refuse =
        (method, headers) ->
            new CallHook() {
              @Override
              public byte[] onRequest(byte[] message) throws StatusException {
                throw Status.PERMISSION_DENIED.asException();
              }
            };
    CallHook hook = newCall(CallHooks.chain(List.of(named("a"), refuse, named("b"))));
    StatusException e = assertThrows(StatusException.class, () -> hook.onRequest(new byte[0]));
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    assertEquals(List.of("a.request"), seen);
  }
}
