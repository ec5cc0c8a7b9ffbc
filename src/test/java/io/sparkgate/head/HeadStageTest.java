package io.sparkgate.head;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.proto.spark.AddArtifactsRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.UserContext;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The head is read once, from the first message, naming the principal; every message is stamped. */
final class HeadStageTest {
  private final HeadStage stage = new HeadStage(AuthConfig.disabled());
  private final Principal alice =
      new Principal("alice", List.of(), Optional.empty(), Principal.Method.JWT, Optional.empty());

  @Test
  void theHead_isReadWhenTheFirstMessageArrives_withThePrincipalsName() throws Exception {
    Call call = Call.of("ExecutePlan");
    call.principal(alice);
    CallHook hook = stage.open(call);
    byte[] request = execute("s-1", "mallory");
    assertFalse(hook.mayBlock(request), "reading the head never waits");
    assertEquals("s-1", call.head().sessionId());
    assertEquals("alice", call.head().userId(), "the user the server will key the session by");
    byte[] stamped = hook.onRequest(request);
    assertEquals("alice", ExecutePlanRequest.parseFrom(stamped).getUserContext().getUserId());
  }

  @Test
  void aStream_isStampedMessageByMessage_andKeepsItsFirstHead() throws Exception {
    Call call = Call.of("AddArtifacts");
    call.principal(alice);
    CallHook hook = stage.open(call);
    // Too large to be asked whether it may wait: read when it is handled.
    hook.onRequest(artifacts("s-1"));
    byte[] second = hook.onRequest(artifacts("s-2"));
    assertEquals("s-1", call.head().sessionId());
    assertEquals("alice", AddArtifactsRequest.parseFrom(second).getUserContext().getUserId());
  }

  @Test
  void withoutAuthentication_theDeclaredUserGoesThrough() throws Exception {
    Call call = Call.of("ExecutePlan");
    call.principal(
        new Principal("", List.of(), Optional.empty(), Principal.Method.NONE, Optional.empty()));
    CallHook hook = stage.open(call);
    byte[] request = execute("s-1", "bob");
    assertEquals(request, hook.onRequest(request));
    assertEquals("bob", call.head().userId());
  }

  private static byte[] execute(String session, String user) {
    return ExecutePlanRequest.newBuilder()
        .setSessionId(session)
        .setUserContext(UserContext.newBuilder().setUserId(user))
        .build()
        .toByteArray();
  }

  private static byte[] artifacts(String session) {
    return AddArtifactsRequest.newBuilder()
        .setSessionId(session)
        .setUserContext(UserContext.newBuilder().setUserId("mallory"))
        .build()
        .toByteArray();
  }
}
