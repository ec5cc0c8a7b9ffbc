package io.sparkgate.call;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The verified identity of the client behind one call: what the authenticate stage puts into the {@link
 * Call}, and what every later stage (identity propagation, policy, routing, audit) reads from it.
 *
 * @param name the user the backend sees as {@code UserContext.user_id}
 * @param clientCertSubject the subject of the verified mTLS client certificate, when there was one
 */
public record Principal(
    String name,
    List<String> groups,
    Optional<String> tenant,
    Method method,
    Optional<String> clientCertSubject) {

  /** How the identity was established. */
  public enum Method {
    /** Authentication is off (no {@code auth} section): the client's declared identity is not checked. */
    NONE,
    JWT,
    STATIC_TOKEN,
    CLIENT_CERT,
    ANONYMOUS
  }

  public Principal {
    Objects.requireNonNull(name, "name");
    groups = List.copyOf(groups);
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(clientCertSubject, "clientCertSubject");
  }

  public static Principal anonymous(Method method) {
    return new Principal("anonymous", List.of(), Optional.empty(), method, Optional.empty());
  }
}
