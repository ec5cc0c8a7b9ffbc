package io.sparkgate.forward;

import io.grpc.Metadata;
import java.util.Locale;
import java.util.Set;

/**
 * Chooses which client request headers reach the backend. Credentials stop at the proxy (the backend gets
 * the proxy's own token, if any); hop-by-hop and transport headers belong to each connection, not the call.
 */
final class HeaderFilter {
  private static final Set<String> DROPPED =
      Set.of(
          "authorization",
          "authentication",
          "connection",
          "keep-alive",
          "proxy-connection",
          "proxy-authorization",
          "transfer-encoding",
          "upgrade",
          "te",
          "host",
          "content-type",
          "user-agent");

  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final String backendAuthorization;

  /** @param backendToken the token for a backend that checks one, or null */
  HeaderFilter(String backendToken) {
    this.backendAuthorization = backendToken == null ? null : "Bearer " + backendToken;
  }

  Metadata toBackend(Metadata fromClient) {
    Metadata out = new Metadata();
    for (String name : fromClient.keys()) {
      if (!forwarded(name)) {
        continue;
      }
      if (name.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
        copy(fromClient, out, Metadata.Key.of(name, Metadata.BINARY_BYTE_MARSHALLER));
      } else {
        copy(fromClient, out, Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER));
      }
    }
    if (backendAuthorization != null) {
      out.put(AUTHORIZATION, backendAuthorization);
    }
    return out;
  }

  static boolean forwarded(String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    if (DROPPED.contains(lower)) {
      return false;
    }
    // grpc-timeout, grpc-encoding and friends describe this hop; grpc-java sets them again for the next.
    return !lower.startsWith("grpc-") || lower.endsWith(Metadata.BINARY_HEADER_SUFFIX);
  }

  private static <T> void copy(Metadata from, Metadata to, Metadata.Key<T> key) {
    Iterable<T> values = from.getAll(key);
    if (values != null) {
      for (T value : values) {
        to.put(key, value);
      }
    }
  }
}
