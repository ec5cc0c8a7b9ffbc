package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.embedded.EmbeddedChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import java.io.ByteArrayOutputStream;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the gRPC listener tells a {@link ConnectionWatch}: connections refused as they are accepted, their set-up
 * and their close, and the RST_STREAM and GOAWAY frames the proxy writes them, however the writes cut the
 * frames.
 */
final class AcceptorTest {
  /** Records what it is told; refuses every connection when {@code refuse}. */
  private static final class Recorder implements ConnectionWatch, ConnectionWatch.Connection {
    final List<String> events = new ArrayList<>();
    boolean refuse;

    @Override
    public Connection accepted(SocketAddress remote) {
      events.add("accepted");
      return refuse ? null : this;
    }

    @Override
    public void established() {
      events.add("established");
    }

    @Override
    public void streamReset(int errorCode) {
      events.add("rst " + errorCode);
    }

    @Override
    public void goAway(int errorCode, String debug) {
      events.add("goaway " + errorCode + " " + debug);
    }

    @Override
    public void closed() {
      events.add("closed");
    }
  }

  @Test
  void refusedConnection_closedAsAccepted_neverPassedOn() {
    Recorder watch = new Recorder();
    watch.refuse = true;
    EmbeddedChannel listener = new EmbeddedChannel(new Acceptor(watch).handler());
    EmbeddedChannel client = new EmbeddedChannel();
    listener.writeInbound(client);
    assertNull(listener.readInbound(), "gRPC never sees it");
    assertFalse(client.isOpen());
    assertEquals(List.of("accepted"), watch.events);
  }

  @Test
  void admittedConnection_established_framesReported_closedOnce() {
    Recorder watch = new Recorder();
    Acceptor acceptor = new Acceptor(watch);
    EmbeddedChannel listener = new EmbeddedChannel(acceptor.handler());
    EmbeddedChannel client = new EmbeddedChannel();
    listener.writeInbound(client);
    assertSame(client, listener.readInbound(), "passed on to gRPC");
    client.pipeline().addLast("http2", Http2FrameCodecBuilder.forServer().build());

    acceptor
        .transportFilter()
        .transportReady(
            Attributes.newBuilder()
                .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, client.remoteAddress())
                .build());
    List<String> names = client.pipeline().names();
    assertTrue(
        names.indexOf("sparkgate-frame-tap") >= 0
            && names.indexOf("sparkgate-frame-tap") < names.indexOf("http2"),
        "the tap reads below the HTTP/2 codec: " + names);
    // As the codec writes it: from its place in the pipeline, through the tap.
    client.pipeline().context("http2").writeAndFlush(goAway(0xb, "too_many_pings"));

    client.close(); // the codec says goodbye with a graceful GOAWAY of its own
    assertEquals(
        List.of("accepted", "established", "goaway 11 too_many_pings", "goaway 0 ", "closed"),
        watch.events);
  }

  @Test
  void frames_readAcrossWrites_otherFramesSkipped() {
    Recorder watch = new Recorder();
    EmbeddedChannel ch = new EmbeddedChannel(new FrameTap(watch));
    ByteArrayOutputStream wire = new ByteArrayOutputStream();
    wire.writeBytes(frame(0x0, 1, new byte[70_000])); // DATA, longer than any write below
    wire.writeBytes(frame(0x3, 1, new byte[] {0, 0, 0, 7})); // RST_STREAM REFUSED_STREAM
    wire.writeBytes(frame(0x1, 3, "headers".getBytes(StandardCharsets.US_ASCII)));
    wire.writeBytes(
        frame(0x7, 0, goAwayPayload(0x1, "x".repeat(500)))); // debug data beyond the read
    wire.writeBytes(frame(0x3, 3, new byte[] {0, 0, 0, 8})); // RST_STREAM CANCEL
    byte[] bytes = wire.toByteArray();
    for (int at = 0, cut = 1; at < bytes.length; at += cut, cut = cut * 3 % 4099 + 1) {
      ch.writeOutbound(Unpooled.wrappedBuffer(bytes, at, Math.min(cut, bytes.length - at)));
    }
    assertEquals(
        List.of("rst 7", "goaway 1 " + "x".repeat(FrameTap.DEBUG_BYTES), "rst 8"), watch.events);
    ByteBuf passed;
    int total = 0;
    while ((passed = ch.readOutbound()) != null) {
      total += passed.readableBytes();
      passed.release();
    }
    assertEquals(bytes.length, total, "every byte passes on");
  }

  private static ByteBuf goAway(int code, String debug) {
    return Unpooled.wrappedBuffer(frame(0x7, 0, goAwayPayload(code, debug)));
  }

  private static byte[] goAwayPayload(int code, String debug) {
    byte[] d = debug.getBytes(StandardCharsets.US_ASCII);
    byte[] p = new byte[8 + d.length];
    p[3] = 1; // last stream id
    p[4] = (byte) (code >>> 24);
    p[5] = (byte) (code >>> 16);
    p[6] = (byte) (code >>> 8);
    p[7] = (byte) code;
    System.arraycopy(d, 0, p, 8, d.length);
    return p;
  }

  private static byte[] frame(int type, int stream, byte[] payload) {
    byte[] f = new byte[9 + payload.length];
    f[0] = (byte) (payload.length >>> 16);
    f[1] = (byte) (payload.length >>> 8);
    f[2] = (byte) payload.length;
    f[3] = (byte) type;
    f[8] = (byte) stream;
    System.arraycopy(payload, 0, f, 9, payload.length);
    return f;
  }
}
