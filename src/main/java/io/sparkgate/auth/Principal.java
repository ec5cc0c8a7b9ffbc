package io.sparkgate.auth;

import io.grpc.Context;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The verified identity of the client behind one call, available to every later stage (identity
 * propagation, policy, audit) through {@link #current()} while the call runs.
 *
 * @param name the user the backend sees as {@code UserContext.user_id}
 * @param clientCertSubject the subject of the verified mTLS client certificate, when there was one
 */
public record Principal(
    String name, List<String> groups, Optional<String> tenant, Method method, Optional<String> clientCertSubject) {

  /** How the identity was established. */
  public enum Method {
    /** Authentication is off (no {@code auth} section): the client's declared identity is not checked. */
    NONE,
    JWT,
    STATIC_TOKEN,
    CLIENT_CERT,
    ANONYMOUS
  }

  /** The principal of the call running in the current gRPC {@link Context}. */
  public static final Context.Key<Principal> KEY = Context.key("sparkgate-principal");

  public Principal {
    Objects.requireNonNull(name, "name");
    groups = List.copyOf(groups);
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(clientCertSubject, "clientCertSubject");
  }

  /**
   * The principal of the call being started, for its hooks to keep ({@link io.sparkgate.forward.CallHook.Factory#newCall});
   * null outside the start of an authenticated call, including in the call's later callbacks.
   */
  public static Principal current() {
    return KEY.get();
  }

  static Principal anonymous(Method method) {
    return new Principal("anonymous", List.of(), Optional.empty(), method, Optional.empty());
  }
}
