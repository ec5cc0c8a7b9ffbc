package io.sparkgate.auth;

import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.forward.CallHook;

/**
 * Stamps the call's principal onto every request message of every Spark Connect RPC, including each
 * message of an AddArtifacts stream (the server reads identity from the first one only, but a later one
 * must not carry a different identity either).
 */
final class IdentityHooks implements CallHook.Factory {
  private final UserContextRewriter rewriter;

  IdentityHooks(UserContextRewriter rewriter) {
    this.rewriter = rewriter;
  }

  @Override
  public CallHook newCall(MethodDescriptor<?, ?> method, Metadata headers) throws StatusException {
    Principal principal = Principal.current();
    if (principal == null) {
      // The interceptor did not run for this call: forwarding it would forward an unchecked identity.
      throw Status.UNAUTHENTICATED.withDescription("Sparkgate could not authenticate this call").asException();
    }
    if (principal.method() == Principal.Method.NONE) {
      return CallHook.PASS_THROUGH; // authentication is off: the client's own user_id goes through
    }
    return new CallHook() {
      @Override
      public byte[] onRequest(byte[] message) throws StatusException {
        return rewriter.rewrite(message, principal);
      }
    };
  }
}
