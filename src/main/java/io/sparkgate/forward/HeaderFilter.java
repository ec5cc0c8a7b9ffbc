package io.sparkgate.forward;

import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Chooses which client request headers reach the backend. Credentials stop at the proxy (the backend gets
 * the proxy's own token, if any); hop-by-hop and transport headers belong to each connection, not the call.
 *
 * <p>Headers are copied as the transport's name and value bytes ({@link InternalMetadata}), once per call:
 * going through {@link Metadata#keys()} and typed keys built a set, a string and a key per header, and
 * decoded and re-encoded every value, for a copy that changes nothing but which headers are in it.
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

  /** The same names as bytes, for the per-call check. */
  private static final byte[][] DROPPED_BYTES =
      DROPPED.stream().map(n -> n.getBytes(StandardCharsets.US_ASCII)).toArray(byte[][]::new);

  private static final byte[] GRPC_PREFIX = "grpc-".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] BINARY_SUFFIX =
      Metadata.BINARY_HEADER_SUFFIX.getBytes(StandardCharsets.US_ASCII);
  private static final byte[] AUTHORIZATION = "authorization".getBytes(StandardCharsets.US_ASCII);

  private final Map<String, byte[]> authorizations;
  private final byte[] firstAuthorization;

  /** @param backendToken the token for a backend that checks one, or null */
  HeaderFilter(String backendToken) {
    this(Map.of(), backendToken);
  }

  /**
   * @param tokens the token of each backend that checks one, by {@code host:port}
   * @param firstToken the token of the backend calls that name none go to, or null
   */
  HeaderFilter(Map<String, String> tokens, String firstToken) {
    Map<String, byte[]> bytes = new HashMap<>();
    tokens.forEach((address, token) -> bytes.put(address, bearer(token)));
    this.authorizations = Map.copyOf(bytes);
    this.firstAuthorization = firstToken == null ? null : bearer(firstToken);
  }

  private static byte[] bearer(String token) {
    return ("Bearer " + token).getBytes(StandardCharsets.US_ASCII);
  }

  Metadata toBackend(Metadata fromClient) {
    return toBackend(fromClient, null);
  }

  /** The headers for the backend at {@code address} (null: the first backend). */
  Metadata toBackend(Metadata fromClient, String address) {
    byte[] backendAuthorization =
        address == null ? firstAuthorization : authorizations.get(address);
    // Name, value, name, value...; binary values raw, as newMetadata takes them. Not to be
    // modified.
    byte[][] pairs = InternalMetadata.serialize(fromClient);
    byte[][] out = new byte[pairs.length + 2][];
    int n = 0;
    for (int i = 0; i + 1 < pairs.length; i += 2) {
      if (forwarded(pairs[i])) {
        out[n++] = pairs[i];
        out[n++] = pairs[i + 1];
      }
    }
    if (backendAuthorization != null) {
      out[n++] = AUTHORIZATION;
      out[n++] = backendAuthorization;
    }
    return InternalMetadata.newMetadata(n / 2, out);
  }

  /** Whether a header reaches the backend; names are lower case (HTTP/2 requires it, gRPC's keys ensure it). */
  private static boolean forwarded(byte[] name) {
    for (byte[] dropped : DROPPED_BYTES) {
      if (Arrays.equals(name, dropped)) {
        return false;
      }
    }
    // grpc-timeout, grpc-encoding and friends describe this hop; grpc-java sets them again for the
    // next.
    return !startsWith(name, GRPC_PREFIX) || endsWith(name, BINARY_SUFFIX);
  }

  private static boolean startsWith(byte[] name, byte[] prefix) {
    return name.length >= prefix.length
        && Arrays.equals(name, 0, prefix.length, prefix, 0, prefix.length);
  }

  private static boolean endsWith(byte[] name, byte[] suffix) {
    int from = name.length - suffix.length;
    return from >= 0 && Arrays.equals(name, from, name.length, suffix, 0, suffix.length);
  }
}
