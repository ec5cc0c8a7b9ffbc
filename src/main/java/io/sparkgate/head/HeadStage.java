package io.sparkgate.head;

import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Stage;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.inspect.RequestHead;

/**
 * The head stage, right after authenticate: stamps the principal onto every request message (its {@code
 * user_context}, see {@link UserContextRewriter}) and reads the call's {@link RequestHead} from its first
 * message, once, for every stage after it (route, quota, redaction, audit, the admin view). The head names
 * the user Spark will key the session by: the principal's name when authentication is on, else the user the
 * client declared.
 *
 * <p>The head is read when the first message arrives, before the stages are asked whether handling it may wait
 * (the route stage answers from the session the head names); a message too large for that question is read
 * when it is handled.
 */
public final class HeadStage implements Stage {
  private final UserContextRewriter stamp;

  public HeadStage(AuthConfig auth) {
    this.stamp = new UserContextRewriter(auth.userIdMismatch(), auth.userContextExtensions());
  }

  @Override
  public CallHook open(Call call) {
    return new Head(call);
  }

  private final class Head implements CallHook {
    private final Call call;
    private boolean read; // request side only

    Head(Call call) {
      this.call = call;
    }

    @Override
    public boolean mayBlock(byte[] message) {
      readOnce(message);
      return false;
    }

    @Override
    public byte[] onRequest(byte[] message) throws io.grpc.StatusException {
      readOnce(message);
      Principal principal = call.principal();
      return stamps(principal) ? stamp.rewrite(message, principal) : message;
    }

    private void readOnce(byte[] message) {
      if (read) return;
      read = true;
      RequestHead head = RequestHead.read(call.method(), message);
      Principal principal = call.principal();
      call.head(stamps(principal) ? head.withUserId(principal.name()) : head);
    }
  }

  /** Without authentication (or a principal) the client's own user_id goes through. */
  private static boolean stamps(Principal principal) {
    return principal != null && principal.method() != Principal.Method.NONE;
  }
}
