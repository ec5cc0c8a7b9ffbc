package io.sparkgate.forward;

import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelOutboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelPromise;
import java.nio.charset.StandardCharsets;

/**
 * Reads the frame headers of what the proxy's HTTP/2 codec sends one client (in the clear, below TLS) and
 * reports each RST_STREAM and GOAWAY to the connection's {@link ConnectionWatch.Connection}: gRPC and Netty
 * enforce the HTTP/2 limits but report nothing a metric could read, and the frame they send says why. Only the
 * 9-byte headers and the start of GOAWAY and RST_STREAM payloads are looked at; the bytes pass on untouched.
 */
final class FrameTap extends ChannelOutboundHandlerAdapter {
  private static final int HEADER = 9;
  private static final int RST_STREAM = 0x3;
  private static final int GOAWAY = 0x7;

  /** GOAWAY's last stream id and error code, then this much of its debug data. */
  static final int DEBUG_BYTES = 96;

  private final ConnectionWatch.Connection connection;
  private final byte[] frame = new byte[HEADER + 8 + DEBUG_BYTES];
  private int filled;
  private int wanted = HEADER;
  private int length;
  private long skip;

  FrameTap(ConnectionWatch.Connection connection) {
    this.connection = connection;
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
          report();
        }
        skip = length - (wanted - HEADER);
        filled = 0;
        wanted = HEADER;
      }
    }
  }

  private void report() {
    int type = frame[3] & 0xff;
    if (type == RST_STREAM && wanted >= HEADER + 4) {
      connection.streamReset(readInt(HEADER));
    } else if (type == GOAWAY && wanted >= HEADER + 8) {
      connection.goAway(
          readInt(HEADER + 4),
          new String(frame, HEADER + 8, wanted - HEADER - 8, StandardCharsets.US_ASCII));
    }
  }

  private int readInt(int at) {
    return ((frame[at] & 0xff) << 24)
        | ((frame[at + 1] & 0xff) << 16)
        | ((frame[at + 2] & 0xff) << 8)
        | (frame[at + 3] & 0xff);
  }
}
