package io.sparkgate.limits;

/**
 * What the HTTP/2 frames the proxy sends a client say about its misbehaviour, as {@link Abuse.Kind}s: a stream
 * refused or reset by RST_STREAM's error code, a connection closed by GOAWAY's error code and the words gRPC
 * and Netty put in its debug data (the frames themselves are read in io.sparkgate.forward).
 */
final class Http2Watch {
  private static final int PROTOCOL_ERROR = 0x1;
  private static final int FLOW_CONTROL_ERROR = 0x3;
  private static final int REFUSED_STREAM = 0x7;
  private static final int ENHANCE_YOUR_CALM = 0xb;

  private Http2Watch() {}

  /** Why an RST_STREAM refused or cut off a stream; null for one that is no abuse (a cancel). */
  static Abuse.Kind reset(int code) {
    return switch (code) {
      case REFUSED_STREAM -> Abuse.Kind.STREAMS_REFUSED;
      case FLOW_CONTROL_ERROR -> Abuse.Kind.FLOW_CONTROL;
      case PROTOCOL_ERROR -> Abuse.Kind.PROTOCOL_ERROR;
      default -> null;
    };
  }

  /** Why a GOAWAY closed the connection; null for a graceful one (shutdown, idle). */
  static Abuse.Kind kind(int code, String debug) {
    String d = debug.toLowerCase(java.util.Locale.ROOT);
    // Netty's words for a header block over the limit, and for a CONTINUATION flood of small
    // frames.
    if (d.contains("header") && (d.contains("size") || d.contains("large"))
        || d.contains("continuation")) {
      return Abuse.Kind.HEADERS_TOO_LARGE;
    }
    if (code == ENHANCE_YOUR_CALM) {
      if (d.contains("ping")) return Abuse.Kind.PING_FLOOD;
      if (d.contains("rst")) return Abuse.Kind.RAPID_RESET;
      return Abuse.Kind.CONTROL_FRAME_FLOOD;
    }
    if (code == FLOW_CONTROL_ERROR) return Abuse.Kind.FLOW_CONTROL;
    if (code == 0) return null;
    if (d.contains("window")) return Abuse.Kind.FLOW_CONTROL;
    return Abuse.Kind.PROTOCOL_ERROR;
  }
}
