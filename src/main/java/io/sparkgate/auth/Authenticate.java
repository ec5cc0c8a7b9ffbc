package io.sparkgate.auth;

import io.grpc.Attributes;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Stage;
import io.sparkgate.forward.CallHook;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The authenticate stage, first of every call: establishes the call's {@link Principal} from its headers and
 * TLS session, or refuses it with UNAUTHENTICATED and a short message the user can act on, so the backend is
 * never contacted (the detail goes to the log, never the token, and is counted). The head stage after it
 * stamps the principal onto every request message.
 */
final class Authenticate implements Stage {
  private static final Logger log = LoggerFactory.getLogger(Authenticate.class);

  /** Gives each client connection its {@link TokenCache.LastToken}; register it on the server. */
  static final ServerTransportFilter CONNECTIONS =
      new ServerTransportFilter() {
        @Override
        public Attributes transportReady(Attributes attributes) {
          return attributes.toBuilder()
              .set(TokenCache.LastToken.KEY, new TokenCache.LastToken())
              .build();
        }
      };

  private final Authenticator authenticator;
  private final AuthFailures failures;
  private final LongAdder anonymous = new LongAdder();

  Authenticate(Authenticator authenticator, AuthFailures failures) {
    this.authenticator = authenticator;
    this.failures = failures;
  }

  @Override
  public CallHook open(Call call) throws StatusException {
    Principal principal = authenticate(call);
    if (principal.method() == Principal.Method.ANONYMOUS) anonymous.increment();
    call.principal(principal);
    return CallHook.PASS_THROUGH;
  }

  long anonymousCalls() {
    return anonymous.sum();
  }

  private Principal authenticate(Call call) throws StatusException {
    try {
      return authenticator.authenticate(
          call.headers(), call.sslSession(), call.transport().get(TokenCache.LastToken.KEY));
    } catch (AuthFailure e) {
      failures.count(e.reason());
      call.decided("unauthenticated", null);
      call.audit().authFailure(e.reason().name().toLowerCase(Locale.ROOT));
      log.warn(
          "refused {} from {}: {} ({})",
          call.method(),
          call.remoteAddress(),
          e.detail(),
          e.reason());
      throw Status.UNAUTHENTICATED.withDescription(e.clientMessage()).asException();
    } catch (RuntimeException e) {
      // Fail closed, and keep library text (which may quote the token) away from the client.
      log.error("authentication failed unexpectedly for {}", call.method(), e);
      call.decided("unauthenticated", null);
      throw Status.UNAUTHENTICATED
          .withDescription("Sparkgate could not authenticate this call")
          .asException();
    }
  }
}
