package io.sparkgate.limits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** The GOAWAYs gRPC and Netty send, as their debug data words them, each counted under its kind. */
final class Http2WatchTest {
  @Test
  void goawayDebugData_classified() {
    assertEquals(Abuse.Kind.PING_FLOOD, Http2Watch.kind(0xb, "too_many_pings"));
    assertEquals(Abuse.Kind.RAPID_RESET, Http2Watch.kind(0xb, "too_many_rststreams"));
    assertEquals(
        Abuse.Kind.CONTROL_FRAME_FLOOD,
        Http2Watch.kind(0xb, "Maximum number 10000 of outstanding control frames reached"));
    assertEquals(
        Abuse.Kind.HEADERS_TOO_LARGE,
        Http2Watch.kind(
            0xb, "Number of small consecutive continuations frames 17 exceeds maximum: 16"));
    assertEquals(
        Abuse.Kind.HEADERS_TOO_LARGE,
        Http2Watch.kind(0x1, "Header size exceeded max allowed size (40960)"));
    assertEquals(
        Abuse.Kind.FLOW_CONTROL,
        Http2Watch.kind(0x1, "Received WINDOW_UPDATE with delta 0 for connection stream"));
    assertEquals(
        Abuse.Kind.FLOW_CONTROL, Http2Watch.kind(0x3, "Window size overflow for stream: 0"));
    assertEquals(Abuse.Kind.PROTOCOL_ERROR, Http2Watch.kind(0x1, "Unexpected HTTP/1.x request"));
    assertNull(Http2Watch.kind(0x0, "app_requested"), "a graceful GOAWAY is no abuse");
  }
}
