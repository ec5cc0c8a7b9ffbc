package io.sparkgate.limits;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;

/**
 * Refuses a call whose request headers exceed {@code limits.max_header_bytes} with a status that says so.
 * gRPC's own limit is set to {@link #transportLimit} instead: a client is told the limit in SETTINGS and
 * grpc-java's refuses locally to send a larger block, as {@code INTERNAL: http2 exception}, which tells a user
 * nothing; between the two limits the block arrives, and this answers it clearly (a bearer token too long for
 * the limit gets UNAUTHENTICATED). Headers are counted as HTTP/2 does: name, value and 32 bytes an entry.
 */
final class HeaderLimit implements ServerInterceptor {
  private static final String AUTHORIZATION = "authorization";

  private final int max;
  private final Abuse abuse;

  HeaderLimit(int max, Abuse abuse) {
    this.max = max;
    this.abuse = abuse;
  }

  /** The header list size gRPC and Netty enforce and advertise for {@code max}: four times it. */
  static int transportLimit(int max) {
    return (int) Math.min(Integer.MAX_VALUE, 4L * max);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    long total = 0;
    long authorization = 0;
    for (String name : headers.keys()) {
      long size = size(headers, name);
      total += size;
      if (name.equals(AUTHORIZATION)) {
        authorization = size;
      }
    }
    if (total <= max) {
      return next.startCall(call, headers);
    }
    abuse.count(Abuse.Kind.HEADERS_TOO_LARGE);
    Status status =
        total - authorization <= max
            ? Status.UNAUTHENTICATED.withDescription(
                "the bearer token is too long: request headers may be at most "
                    + max
                    + " bytes (limits.max_header_bytes)")
            : Status.RESOURCE_EXHAUSTED.withDescription(
                "request headers exceed " + max + " bytes (limits.max_header_bytes)");
    call.close(status, new Metadata());
    return new ServerCall.Listener<>() {};
  }

  private static long size(Metadata headers, String name) {
    long n = 0;
    if (name.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
      Iterable<byte[]> values =
          headers.getAll(Metadata.Key.of(name, Metadata.BINARY_BYTE_MARSHALLER));
      if (values != null) {
        for (byte[] v : values) {
          // On the wire binary values are base64: 4 bytes for every 3.
          n += name.length() + 4L * ((v.length + 2) / 3) + 32;
        }
      }
    } else {
      Iterable<String> values =
          headers.getAll(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER));
      if (values != null) {
        for (String v : values) {
          n += name.length() + v.getBytes(StandardCharsets.US_ASCII).length + 32;
        }
      }
    }
    return n;
  }
}
