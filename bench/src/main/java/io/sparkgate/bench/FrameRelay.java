package io.sparkgate.bench;

import io.grpc.Status;
import io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap;
import io.grpc.netty.shaded.io.netty.bootstrap.ServerBootstrap;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.CompositeByteBuf;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelFuture;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.ChannelInitializer;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.SocketChannel;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ChannelDuplexHandler;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2DataFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Error;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2FrameCodec;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2FrameStream;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2HeadersFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ResetFrame;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Settings;
import io.grpc.netty.shaded.io.netty.handler.ssl.ApplicationProtocolConfig;
import io.grpc.netty.shaded.io.netty.handler.ssl.ApplicationProtocolNames;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import io.grpc.netty.shaded.io.netty.util.AsciiString;
import io.grpc.netty.shaded.io.netty.util.ReferenceCountUtil;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * A benchmark baseline, not part of Sparkgate: a Java TLS-terminating HTTP/2 relay built on the same Netty,
 * TLS provider (BoringSSL) and event-loop model as the proxy, that relays HEADERS, DATA and RST_STREAM
 * frames between a client connection and its own backend connection and does nothing else: no gRPC
 * framing, no calls, no features. It answers "how much of Sparkgate's added latency is gRPC's per-call
 * machinery, and how low could a Java proxy that forwards below gRPC's API go on this machine?", which is
 * what decides whether rewriting the forwarding path is worth it. Flow control: a DATA frame's bytes are
 * returned to its sender once the frame has been written to the other side. Run by {@link Endpoints}.
 *
 * <p>With {@code --config sparkgate.yaml} it also does Sparkgate's per-call work ({@link RelayFeatures}): each
 * request is held until its stream ends, run through the auth and audit interceptors and the policy hooks
 * (and forwarded as they rewrote it, without the client's token, or refused with a trailers-only answer),
 * and the call's audit record is written when the backend's trailers pass: "java-relay-full", an estimate
 * of a below-gRPC forwarding path with today's features.
 */
public final class FrameRelay {
  private static final int WINDOW = 4 * 1024 * 1024;

  private FrameRelay() {}

  public static void main(String[] args) throws Exception {
    int port = 0;
    int backendPort = 0;
    File cert = null;
    File key = null;
    Path config = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--port" -> port = Integer.parseInt(args[++i]);
        case "--backend-port" -> backendPort = Integer.parseInt(args[++i]);
        case "--cert" -> cert = new File(args[++i]);
        case "--key" -> key = new File(args[++i]);
        case "--config" -> config = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    SslContext tls =
        SslContextBuilder.forServer(cert, key)
            .sslProvider(SslProvider.OPENSSL)
            .applicationProtocolConfig(
                new ApplicationProtocolConfig(
                    ApplicationProtocolConfig.Protocol.ALPN,
                    ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                    ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                    ApplicationProtocolNames.HTTP_2))
            .build();
    EventLoopGroup loops =
        new MultiThreadIoEventLoopGroup(
            Runtime.getRuntime().availableProcessors(), EpollIoHandler.newFactory());
    InetSocketAddress backend = new InetSocketAddress("127.0.0.1", backendPort);
    RelayFeatures features = config == null ? null : RelayFeatures.start(config, backendPort);
    Channel server =
        new ServerBootstrap()
            .group(loops)
            .channel(EpollServerSocketChannel.class)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.AUTO_READ, false) // until its backend connection is up
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    ch.pipeline()
                        .addLast(
                            tls.newHandler(ch.alloc()),
                            codec(true),
                            new ClientSide(backend, features));
                  }
                })
            .bind("127.0.0.1", port)
            .sync()
            .channel();
    System.out.println("frame relay listening on " + server.localAddress());
    server.closeFuture().sync();
  }

  private static Http2FrameCodec codec(boolean server) {
    Http2Settings settings =
        Http2Settings.defaultSettings().initialWindowSize(WINDOW).maxConcurrentStreams(10_000);
    return (server ? Http2FrameCodecBuilder.forServer() : Http2FrameCodecBuilder.forClient())
        .initialSettings(settings)
        .build();
  }

  /** One client connection: opens its backend connection on the same event loop, then relays. */
  private static final class ClientSide extends ChannelInboundHandlerAdapter {
    private final InetSocketAddress backendAddress;
    private final RelayFeatures features; // null: relay only
    private final Map<Http2FrameStream, Http2FrameStream> toBackend = new IdentityHashMap<>();
    private final Map<Http2FrameStream, Http2FrameStream> toClient = new IdentityHashMap<>();

    /** With features: client streams whose request is still arriving, and backend streams' calls. */
    private final Map<Http2FrameStream, Pending> pending = new IdentityHashMap<>();

    private final Map<Http2FrameStream, RelayFeatures.Call> calls = new IdentityHashMap<>();
    private Channel client;
    private Channel backend;
    private BackendSide backendSide;

    ClientSide(InetSocketAddress backendAddress, RelayFeatures features) {
      this.backendAddress = backendAddress;
      this.features = features;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      client = ctx.channel();
      backendSide = new BackendSide();
      ChannelFuture connect =
          new Bootstrap()
              .group(client.eventLoop())
              .channel(EpollSocketChannel.class)
              .option(ChannelOption.TCP_NODELAY, true)
              .handler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      ch.pipeline().addLast(codec(false), backendSide);
                    }
                  })
              .connect(backendAddress);
      connect.addListener(
          f -> {
            if (!f.isSuccess()) {
              client.close();
              return;
            }
            backend = connect.channel();
            client.config().setAutoRead(true);
            client.read();
          });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (features != null
          && msg instanceof Http2HeadersFrame h
          && !toBackend.containsKey(h.stream())) {
        pending.put(h.stream(), new Pending(h.headers(), ctx.alloc().compositeBuffer()));
        return;
      }
      if (features != null && msg instanceof Http2DataFrame d && pending.containsKey(d.stream())) {
        Pending p = pending.get(d.stream());
        p.body.addComponent(true, d.content()); // the frame's buffer now belongs to the body
        int credit = d.initialFlowControlledBytes();
        if (credit > 0
            && d.stream()
                .state()
                .remoteSideOpen()) { // a closed stream's bytes return by themselves
          client.write(new DefaultHttp2WindowUpdateFrame(credit).stream(d.stream()));
        }
        if (d.isEndStream()) {
          pending.remove(d.stream());
          forwardCall(d.stream(), p);
        }
        return;
      }
      if (msg instanceof Http2HeadersFrame h) {
        Http2FrameStream out = toBackend.get(h.stream());
        if (out == null) {
          out = backendSide.open();
          toBackend.put(h.stream(), out);
          toClient.put(out, h.stream());
        }
        backend.write(new DefaultHttp2HeadersFrame(h.headers(), h.isEndStream()).stream(out));
      } else if (msg instanceof Http2DataFrame d) {
        relayData(d, toBackend.get(d.stream()), backend, client);
      } else if (msg instanceof Http2ResetFrame r) {
        Pending p = pending.remove(r.stream());
        if (p != null) {
          p.body.release();
        }
        Http2FrameStream out = toBackend.remove(r.stream());
        if (out != null) {
          toClient.remove(out);
          end(out, Status.CANCELLED);
          backend.write(new DefaultHttp2ResetFrame(Http2Error.CANCEL).stream(out));
        }
      } else {
        ReferenceCountUtil.release(msg); // settings, pings, window updates: the codecs handle them
      }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      if (backend != null) {
        backend.flush();
      }
      client.flush(); // window updates, refusals
    }

    /**
     * A whole request: one gRPC message (the bench's clients send one per call) through Sparkgate's
     * features, then forwarded as they left it, or refused.
     */
    private void forwardCall(Http2FrameStream in, Pending p) {
      byte[] message;
      try {
        if (p.body.readableBytes() < 5 || p.body.readByte() != 0) {
          refuse(
              in,
              Status.UNIMPLEMENTED.withDescription(
                  "the feature relay takes one uncompressed message"));
          return;
        }
        message = new byte[p.body.readInt()];
        p.body.readBytes(message);
      } finally {
        p.body.release();
      }
      RelayFeatures.Call call = features.newCall(p.headers, client.remoteAddress());
      byte[] forward = call.onRequest(message);
      if (forward == null) {
        refuse(in, call.refusal());
        return;
      }
      Http2FrameStream out = backendSide.open();
      toBackend.put(in, out);
      toClient.put(out, in);
      calls.put(out, call);
      Http2Headers headers = new DefaultHttp2Headers();
      for (Map.Entry<CharSequence, CharSequence> e : p.headers) {
        if (!AsciiString.contentEqualsIgnoreCase(e.getKey(), "authorization")
            && !AsciiString.contentEqualsIgnoreCase(e.getKey(), "authentication")) {
          headers.add(e.getKey(), e.getValue());
        }
      }
      ByteBuf framed =
          client
              .alloc()
              .buffer(5 + forward.length)
              .writeByte(0)
              .writeInt(forward.length)
              .writeBytes(forward);
      backend.write(new DefaultHttp2HeadersFrame(headers, false).stream(out));
      backend.write(new DefaultHttp2DataFrame(framed, true).stream(out));
    }

    /** A trailers-only answer, as gRPC's server sends a refusal. */
    private void refuse(Http2FrameStream in, Status status) {
      Http2Headers trailers =
          new DefaultHttp2Headers()
              .status("200")
              .add("content-type", "application/grpc")
              .add("grpc-status", Integer.toString(status.getCode().value()));
      if (status.getDescription() != null) {
        trailers.add("grpc-message", status.getDescription());
      }
      client.write(new DefaultHttp2HeadersFrame(trailers, true).stream(in));
    }

    /** The backend stream's call (if features are on) ended: its audit record is written. */
    private void end(Http2FrameStream backendStream, Status status) {
      RelayFeatures.Call call = calls.remove(backendStream);
      if (call != null) {
        call.onEnd(status);
      }
    }

    /** A request whose stream has not ended yet. */
    private record Pending(Http2Headers headers, CompositeByteBuf body) {}

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (backend != null) {
        backend.close();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }

    /** Writes a DATA frame to the other side and returns its bytes to the sender once written. */
    private static void relayData(
        Http2DataFrame d, Http2FrameStream out, Channel to, Channel from) {
      if (out == null) {
        d.release();
        return;
      }
      int credit = d.initialFlowControlledBytes();
      Http2FrameStream in = d.stream();
      to.write(new DefaultHttp2DataFrame(d.content(), d.isEndStream(), d.padding()).stream(out))
          .addListener(
              f -> {
                if (credit > 0 && f.isSuccess() && in.state().remoteSideOpen()) {
                  from.write(new DefaultHttp2WindowUpdateFrame(credit).stream(in));
                }
              });
    }

    /** The backend connection's frames, relayed to the client stream each backend stream serves. */
    private final class BackendSide extends Http2ChannelDuplexHandler {
      /** A new outbound stream, initialized by the first HEADERS frame written with it. */
      Http2FrameStream open() {
        return newStream();
      }

      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof Http2HeadersFrame h) {
          Http2FrameStream in = toClient.get(h.stream());
          if (in != null) {
            client.write(new DefaultHttp2HeadersFrame(h.headers(), h.isEndStream()).stream(in));
            if (h.isEndStream()) {
              CharSequence code = h.headers().get("grpc-status");
              end(
                  h.stream(),
                  code == null
                      ? Status.UNKNOWN
                      : Status.fromCodeValue(Integer.parseInt(code.toString())));
              forget(h.stream());
            }
          }
        } else if (msg instanceof Http2DataFrame d) {
          relayData(d, toClient.get(d.stream()), client, backend);
          if (d.isEndStream()) {
            end(d.stream(), Status.INTERNAL.withDescription("no trailers"));
            forget(d.stream());
          }
        } else if (msg instanceof Http2ResetFrame r) {
          Http2FrameStream in = toClient.get(r.stream());
          end(r.stream(), Status.CANCELLED);
          forget(r.stream());
          if (in != null) {
            client.write(new DefaultHttp2ResetFrame(r.errorCode()).stream(in));
          }
        } else {
          ReferenceCountUtil.release(msg);
        }
      }

      @Override
      public void channelReadComplete(ChannelHandlerContext ctx) {
        client.flush();
      }

      @Override
      public void channelInactive(ChannelHandlerContext ctx) {
        client.close();
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
      }

      private void forget(Http2FrameStream backendStream) {
        Http2FrameStream in = toClient.remove(backendStream);
        if (in != null) {
          toBackend.remove(in);
        }
      }
    }
  }
}
