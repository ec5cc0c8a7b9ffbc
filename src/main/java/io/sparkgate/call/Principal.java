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
 * @param tokenId the verified JWT's {@code jti}, when it had one: an operator may revoke that token alone
 */
public record Principal(
    String name,
    List<String> groups,
    Optional<String> tenant,
    Method method,
    Optional<String> clientCertSubject,
    Optional<String> tokenId) {

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
    Objects.requireNonNull(tokenId, "tokenId");
  }

  public Principal(
      String name,
      List<String> groups,
      Optional<String> tenant,
      Method method,
      Optional<String> clientCertSubject) {
    this(name, groups, tenant, method, clientCertSubject, Optional.empty());
  }

  public static Principal anonymous(Method method) {
    return new Principal("anonymous", List.of(), Optional.empty(), method, Optional.empty());
  }
}
