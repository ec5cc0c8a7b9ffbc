package io.sparkgate.limits;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** HTTP/2 misbehaviour the proxy answered by closing the connection or refusing a stream, by kind. */
public final class Abuse {
  /** Kinds, as the metric's {@code kind} label shows them. */
  public enum Kind {
    /** Streams opened and reset faster than {@code limits.max_stream_resets} allows (CVE-2023-44487). */
    RAPID_RESET,
    /** PINGs more often than the keepalive policy permits. */
    PING_FLOOD,
    /** Control frames (SETTINGS, PING, RST_STREAM answers) queued for a client that does not read them. */
    CONTROL_FRAME_FLOOD,
    /**
     * A header block over {@code limits.max_header_bytes}, in one frame or in CONTINUATION frames, or a
     * CONTINUATION flood of many small frames.
     */
    HEADERS_TOO_LARGE,
    /** Streams opened beyond {@code listen.max_concurrent_streams}, refused one by one. */
    STREAMS_REFUSED,
    /** Window updates that overflow the window, or of zero. */
    FLOW_CONTROL,
    /** Any other breach of the HTTP/2 protocol. */
    PROTOCOL_ERROR;

    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final Map<Kind, LongAdder> counts = new EnumMap<>(Kind.class);

  Abuse() {
    for (Kind k : Kind.values()) {
      counts.put(k, new LongAdder());
    }
  }

  void count(Kind kind) {
    counts.get(kind).increment();
  }

  /** How many times the proxy acted on this kind. */
  public long of(Kind kind) {
    return counts.get(kind).sum();
  }
}
