package io.sparkgate.revoke;

import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Stage;
import io.sparkgate.forward.CallHook;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refuses the calls of a revoked principal (PERMISSION_DENIED: who they are is known, and they may not) and
 * those carrying a revoked JWT (UNAUTHENTICATED: the credential is no good, a new one may be). The reason the
 * operator gave goes to the log and the audit record, never to the client.
 */
final class RevokeStage implements Stage {
  private static final Logger log = LoggerFactory.getLogger(RevokeStage.class);

  private final Revocations revocations;
  private final LongAdder principals = new LongAdder();
  private final LongAdder tokens = new LongAdder();

  RevokeStage(Revocations revocations) {
    this.revocations = revocations;
  }

  @Override
  public CallHook open(Call call) throws StatusException {
    Principal p = call.principal();
    if (p == null || p.method() == Principal.Method.NONE) return CallHook.PASS_THROUGH;
    Optional<Revocation> revoked = revocations.principal(p.name());
    if (revoked.isPresent()) {
      principals.increment();
      throw refuse(
          call,
          revoked.get(),
          Status.PERMISSION_DENIED,
          "Sparkgate: access for '"
              + p.name()
              + "' was revoked by an operator"
              + revoked.get().until().map(u -> " until " + u).orElse("")
              + "; ask your Spark administrators");
    }
    if (p.tokenId().isPresent()) {
      Optional<Revocation> token = revocations.token(p.tokenId().get());
      if (token.isPresent()) {
        tokens.increment();
        throw refuse(
            call,
            token.get(),
            Status.UNAUTHENTICATED,
            "Sparkgate: this token was revoked; sign in again for a new one");
      }
    }
    return CallHook.PASS_THROUGH;
  }

  private static StatusException refuse(
      Call call, Revocation r, Status status, String clientMessage) {
    call.decided("revoked", null);
    call.audit().authFailure("revoked_" + r.kind().key());
    log.warn(
        "refused {} of {}: {} {} revoked by {} ({})",
        call.method(),
        call.principal().name(),
        r.kind().key(),
        r.name(),
        r.operator(),
        r.reason());
    return status.withDescription(clientMessage).asException();
  }

  long refused(Revocation.Kind kind) {
    return (kind == Revocation.Kind.PRINCIPAL ? principals : tokens).sum();
  }
}
