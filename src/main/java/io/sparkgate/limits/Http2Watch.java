package io.sparkgate.limits;

import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelOutboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelPromise;
import java.nio.charset.StandardCharsets;

/**
 * Reads the frame headers of what the proxy's HTTP/2 codec sends one client (in the clear, below TLS) and
 * counts each GOAWAY that closes the connection for misbehaviour, and each stream refused, by {@link
 * Abuse.Kind}. gRPC and Netty enforce the limits but report nothing a metric could read; the frame they
 * send says why. Only the 9-byte headers and the start of GOAWAY and RST_STREAM payloads are looked at.
 */
final class Http2Watch extends ChannelOutboundHandlerAdapter {
  private static final int HEADER = 9;
  private static final int RST_STREAM = 0x3;
  private static final int GOAWAY = 0x7;
  private static final int PROTOCOL_ERROR = 0x1;
  private static final int FLOW_CONTROL_ERROR = 0x3;
  private static final int REFUSED_STREAM = 0x7;
  private static final int ENHANCE_YOUR_CALM = 0xb;

  /** GOAWAY's last stream id and error code, then this much of its debug data. */
  private static final int DEBUG_BYTES = 96;

  private final Abuse abuse;
  private final byte[] frame = new byte[HEADER + 8 + DEBUG_BYTES];
  private int filled;
  private int wanted = HEADER;
  private int length;
  private long skip;

  Http2Watch(Abuse abuse) {
    this.abuse = abuse;
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise)
      throws Exception {
    if (msg instanceof ByteBuf buf) {
      scan(buf);
    }
    ctx.write(msg, promise);
  }

  private void scan(ByteBuf buf) {
    int i = buf.readerIndex();
    int end = buf.writerIndex();
    while (i < end) {
      if (skip > 0) {
        int n = (int) Math.min(skip, end - i);
        i += n;
        skip -= n;
        continue;
      }
      frame[filled++] = buf.getByte(i++);
      if (filled == HEADER && wanted == HEADER) {
        length = ((frame[0] & 0xff) << 16) | ((frame[1] & 0xff) << 8) | (frame[2] & 0xff);
        int type = frame[3] & 0xff;
        int payload =
            type == GOAWAY
                ? Math.min(length, 8 + DEBUG_BYTES)
                : type == RST_STREAM ? Math.min(length, 4) : 0;
        wanted = HEADER + payload;
      }
      if (filled == wanted) {
        if (wanted > HEADER) {
          classify();
        }
        skip = length - (wanted - HEADER);
        filled = 0;
        wanted = HEADER;
      }
    }
  }

  private void classify() {
    int type = frame[3] & 0xff;
    if (type == RST_STREAM && wanted >= HEADER + 4) {
      int code = readInt(HEADER);
      if (code == REFUSED_STREAM) {
        abuse.count(Abuse.Kind.STREAMS_REFUSED);
      } else if (code == FLOW_CONTROL_ERROR) {
        abuse.count(Abuse.Kind.FLOW_CONTROL);
      } else if (code == PROTOCOL_ERROR) {
        abuse.count(Abuse.Kind.PROTOCOL_ERROR);
      }
    } else if (type == GOAWAY && wanted >= HEADER + 8) {
      Abuse.Kind kind =
          kind(
              readInt(HEADER + 4),
              new String(frame, HEADER + 8, wanted - HEADER - 8, StandardCharsets.US_ASCII));
      if (kind != null) {
        abuse.count(kind);
      }
    }
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

  private int readInt(int at) {
    return ((frame[at] & 0xff) << 24)
        | ((frame[at + 1] & 0xff) << 16)
        | ((frame[at + 2] & 0xff) << 8)
        | (frame[at + 3] & 0xff);
  }
}
