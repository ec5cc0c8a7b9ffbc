package io.sparkgate.testing;

import io.sparkgate.call.Principal;
import io.sparkgate.call.Stage;
import io.sparkgate.forward.CallHook;
import io.sparkgate.inspect.RequestHead;

/** Stages as tests need them beside the real ones. */
public final class TestStages {
  private TestStages() {}

  /**
   * Reads the call's head from its first message as the head stage does (the principal's name as its user),
   * without stamping the message: for tests that send bytes no client would, which the stamp refuses before
   * the stage under test sees them, or that compare the stage's reading with the bytes as sent.
   */
  public static Stage unstampedHead() {
    return call ->
        new CallHook() {
          private boolean read;

          @Override
          public byte[] onRequest(byte[] message) {
            if (!read) {
              read = true;
              RequestHead head = RequestHead.read(call.method(), message);
              Principal p = call.principal();
              call.head(p == null ? head : head.withUserId(p.name()));
            }
            return message;
          }
        };
  }
}
