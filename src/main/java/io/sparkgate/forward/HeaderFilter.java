package io.sparkgate.forward;

import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Chooses which client request headers reach the backend: deny by default. A client may assert nothing the
 * backend, a log pipeline or a tracer downstream could trust (who it is, where it connects from, a trace it
 * belongs to), so only the operator's {@code listen.forward_headers} pass, and {@code x-forwarded-for} is
 * set to the peer the proxy itself sees. Credentials stop at the proxy (the backend gets the proxy's own
 * token, if any); gRPC's own headers (timeout, encodings, content type, user agent) are set again by the
 * proxy's client for the next hop.
 *
 * <p>Headers are copied as the transport's name and value bytes ({@link InternalMetadata}), once per call:
 * going through {@link Metadata#keys()} and typed keys built a set, a string and a key per header, and
 * decoded and re-encoded every value, for a copy that changes nothing but which headers are in it.
 */
final class HeaderFilter {
  private static final byte[] AUTHORIZATION = "authorization".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] FORWARDED_FOR = "x-forwarded-for".getBytes(StandardCharsets.US_ASCII);

  private final Map<String, String> tokens; // live: engines come and go
  private final ConcurrentHashMap<String, byte[]> bearers = new ConcurrentHashMap<>();
  private final byte[] firstAuthorization;
  private final byte[][] passed;

  /** @param backendToken the token for a backend that checks one, or null */
  HeaderFilter(String backendToken) {
    this(Map.of(), backendToken, List.of());
  }

  /**
   * @param tokens the token of each backend that checks one, by {@code host:port}: read on every call, so
   *     backends started later (engines) may be added to it
   * @param firstToken the token of the backend calls that name none go to, or null
   * @param forwardHeaders the client headers that pass, lower case, validated by the configuration
   */
  HeaderFilter(Map<String, String> tokens, String firstToken, List<String> forwardHeaders) {
    this.tokens = tokens;
    this.firstAuthorization = firstToken == null ? null : bearer(firstToken);
    this.passed =
        forwardHeaders.stream()
            .map(n -> n.toLowerCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII))
            .toArray(byte[][]::new);
  }

  private static byte[] bearer(String token) {
    return ("Bearer " + token).getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * The headers for the backend at {@code address} (null: the first backend), for a client connected from
   * {@code peer} (null when the transport does not say, as in-process ones do).
   */
  Metadata toBackend(Metadata fromClient, String address, SocketAddress peer) {
    byte[] backendAuthorization = address == null ? firstAuthorization : authorization(address);
    // Name, value, name, value...; binary values raw, as newMetadata takes them. Not to be
    // modified.
    byte[][] pairs = InternalMetadata.serialize(fromClient);
    byte[][] out = new byte[pairs.length + 4][];
    int n = 0;
    for (int i = 0; i + 1 < pairs.length; i += 2) {
      if (forwarded(pairs[i])) {
        out[n++] = pairs[i];
        out[n++] = pairs[i + 1];
      }
    }
    if (peer instanceof InetSocketAddress inet && inet.getAddress() != null) {
      out[n++] = FORWARDED_FOR;
      out[n++] = inet.getAddress().getHostAddress().getBytes(StandardCharsets.US_ASCII);
    }
    if (backendAuthorization != null) {
      out[n++] = AUTHORIZATION;
      out[n++] = backendAuthorization;
    }
    return InternalMetadata.newMetadata(n / 2, out);
  }

  private byte[] authorization(String address) {
    String token = tokens.get(address);
    return token == null ? null : bearers.computeIfAbsent(token, HeaderFilter::bearer);
  }

  /** Whether a header reaches the backend; names are lower case (HTTP/2 requires it, gRPC's keys ensure it). */
  private boolean forwarded(byte[] name) {
    for (byte[] p : passed) {
      if (Arrays.equals(name, p)) {
        return true;
      }
    }
    return false;
  }
}
