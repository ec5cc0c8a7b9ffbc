package io.sparkgate.auth;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.sparkgate.audit.CallEvidence;
import io.sparkgate.forward.CallHooks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Authenticates every call before any handler sees it: the principal goes into the {@link Context} its
 * handler starts in ({@link Principal#KEY}, read as the call's hooks are built), or the call is closed with
 * UNAUTHENTICATED and a short message the user can act on, so the backend is never contacted. The detail goes
 * to the log (never the token) and is counted.
 * The health service stays open: load balancers probe it without credentials.
 */
final class AuthInterceptor implements ServerInterceptor {
  private static final Logger log = LoggerFactory.getLogger(AuthInterceptor.class);
  static final String HEALTH_SERVICE = "grpc.health.v1.Health";

  private final Authenticator authenticator;
  private final AuthFailures failures;

  /** Gives each client connection its {@link TokenCache.LastToken}; register it with this interceptor. */
  static final ServerTransportFilter CONNECTIONS = new ServerTransportFilter() {
    @Override
    public Attributes transportReady(Attributes attributes) {
      return attributes.toBuilder().set(TokenCache.LastToken.KEY, new TokenCache.LastToken()).build();
    }
  };

  AuthInterceptor(Authenticator authenticator, AuthFailures failures) {
    this.authenticator = authenticator;
    this.failures = failures;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    if (HEALTH_SERVICE.equals(call.getMethodDescriptor().getServiceName())) {
      return next.startCall(call, headers);
    }
    Principal principal;
    try {
      Attributes connection = call.getAttributes();
      principal = authenticator.authenticate(headers, connection.get(Grpc.TRANSPORT_ATTR_SSL_SESSION),
          connection.get(TokenCache.LastToken.KEY));
    } catch (AuthFailure e) {
      failures.count(e.reason());
      CallEvidence.current().put("decision", "unauthenticated");
      CallEvidence.current().put("auth_failure", e.reason().name().toLowerCase(java.util.Locale.ROOT));
      log.warn("refused {} from {}: {} ({})", call.getMethodDescriptor().getBareMethodName(),
          call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR), e.detail(), e.reason());
      call.close(Status.UNAUTHENTICATED.withDescription(e.clientMessage()), new Metadata());
      return new ServerCall.Listener<>() {};
    } catch (RuntimeException e) {
      // Fail closed, and keep library text (which may quote the token) away from the client.
      log.error("authentication failed unexpectedly for {}", call.getMethodDescriptor().getBareMethodName(), e);
      call.close(Status.UNAUTHENTICATED.withDescription("Sparkgate could not authenticate this call"), new Metadata());
      return new ServerCall.Listener<>() {};
    }
    record(principal, CallEvidence.current());
    return CallHooks.startIn(Context.current().withValue(Principal.KEY, principal), call, headers, next);
  }

  /** Who called, for the call's audit record. */
  private static void record(Principal principal, CallEvidence evidence) {
    evidence.put("principal", principal.name());
    evidence.put("groups", principal.groups());
    principal.tenant().ifPresent(t -> evidence.put("tenant", t));
    evidence.put("auth_method", principal.method().name().toLowerCase(java.util.Locale.ROOT));
    principal.clientCertSubject().ifPresent(s -> evidence.put("client_cert_subject", s));
  }
}
