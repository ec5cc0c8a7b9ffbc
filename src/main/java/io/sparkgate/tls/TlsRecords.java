package io.sparkgate.tls;

import io.grpc.netty.shaded.io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiators;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelOutboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelPromise;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslHandler;
import io.grpc.netty.shaded.io.netty.util.AsciiString;

/**
 * gRPC's server TLS, with the plaintext cut into TLS records to suit what is being sent.
 *
 * <p>HTTP/2 writes every DATA frame as two buffers: a 9-byte frame header, then a slice of the message. By
 * default Netty's {@link SslHandler} packs queued writes into full 16 KiB records, and since BoringSSL
 * encrypts one contiguous buffer per record, it first copies the header and the slice into a new buffer. While
 * results stream, that is one more copy of every byte the proxy sends: profiled, 8-10% of the event loops'
 * time, about as much as the encryption itself. So a flush that carries bulk data (any write of at least
 * {@link #BULK_BYTES}) is encrypted buffer by buffer: each slice becomes a record of its own, straight from
 * the transport buffer, and each frame header a record of 31 bytes on the wire (0.2% more bytes, and one more,
 * tiny, encryption per frame). A flush of small writes (headers, small responses, trailers) is still packed
 * into as few records as possible: there the copy is small, and every record costs both sides a call into
 * BoringSSL.
 *
 * <p>gRPC builds the {@link SslHandler} itself; the negotiator's handler is the one place it is reachable.
 */
final class TlsRecords implements InternalProtocolNegotiator.ProtocolNegotiator {
  /**
   * A write at least this large (half a full record) marks its flush as bulk data, encrypted write by write:
   * below it, the copy saved is smaller than the cost of the extra records.
   */
  static final int BULK_BYTES = 8 * 1024;
  /** Netty's default: the largest TLS record. */
  static final int PACKED_RECORD_BYTES = 16 * 1024;

  private final InternalProtocolNegotiator.ProtocolNegotiator tls;

  TlsRecords(SslContext context) {
    this.tls = InternalProtocolNegotiators.serverTls(context);
  }

  @Override
  public AsciiString scheme() {
    return tls.scheme();
  }

  @Override
  public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
    return new Installer(tls.newHandler(grpcHandler));
  }

  @Override
  public void close() {
    tls.close();
  }

  /**
   * Runs gRPC's negotiation handler behind itself and puts a {@link RecordSizer} behind the SslHandler once
   * that exists: gRPC adds it when the connection becomes active, not when the channel is set up.
   */
  private static final class Installer extends ChannelInboundHandlerAdapter {
    private final ChannelHandler negotiation;

    Installer(ChannelHandler negotiation) {
      this.negotiation = negotiation;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      ctx.pipeline().addAfter(ctx.name(), null, negotiation);
      install(ctx);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      ctx.fireChannelActive();
      install(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
      ctx.fireUserEventTriggered(event);
      install(ctx);
    }

    private void install(ChannelHandlerContext ctx) {
      ChannelHandlerContext ssl = ctx.pipeline().context(SslHandler.class);
      if (ssl != null && !ctx.isRemoved()) {
        ctx.pipeline().addAfter(ssl.name(), null, new RecordSizer((SslHandler) ssl.handler()));
        ctx.pipeline().remove(this);
      }
    }
  }

  /** Sits between HTTP/2 and TLS and sets, before each flush, how the SslHandler packs what was written. */
  static final class RecordSizer extends ChannelOutboundHandlerAdapter {
    private final SslHandler ssl;
    private boolean bulk; // a write since the last flush was bulk data

    RecordSizer(SslHandler ssl) {
      this.ssl = ssl;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
      if (msg instanceof ByteBuf buf && buf.readableBytes() >= BULK_BYTES) {
        bulk = true;
      }
      ctx.write(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
      // Zero makes the SslHandler encrypt each queued buffer as it is, without packing (and copying) them.
      ssl.setWrapDataSize(bulk ? 0 : PACKED_RECORD_BYTES);
      bulk = false;
      ctx.flush();
    }
  }
}
