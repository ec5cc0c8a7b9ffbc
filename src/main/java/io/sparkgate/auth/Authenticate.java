package io.sparkgate.auth;

import io.grpc.Attributes;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Stage;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The authenticate stage, first of every call: establishes the call's {@link Principal} from its headers and
 * TLS session, or refuses it with UNAUTHENTICATED and a short message the user can act on, so the backend is
 * never contacted (the detail goes to the log, never the token, and is counted). Then stamps the principal
 * onto every request message, including each message of an AddArtifacts stream, and keeps secrets in Config
 * answers from the client ({@link ConfigRedaction}).
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
  private final UserContextRewriter stamp;
  private final ConfigRedaction redaction;

  Authenticate(
      Authenticator authenticator,
      AuthFailures failures,
      UserContextRewriter stamp,
      ConfigRedaction redaction) {
    this.authenticator = authenticator;
    this.failures = failures;
    this.stamp = stamp;
    this.redaction = redaction;
  }

  @Override
  public CallHook open(Call call) throws StatusException {
    Principal principal = authenticate(call);
    call.principal(principal);
    CallHook redact = redaction.open(call);
    if (principal.method() == Principal.Method.NONE) {
      return redact; // authentication is off: the client's own user_id goes through
    }
    return new CallHook() {
      @Override
      public byte[] onRequest(byte[] message) throws StatusException {
        return redact.onRequest(stamp.rewrite(message, principal));
      }

      @Override
      public Payload onResponse(Payload message) {
        return redact.onResponse(message);
      }
    };
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
