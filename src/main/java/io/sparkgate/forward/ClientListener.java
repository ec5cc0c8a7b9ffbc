package io.sparkgate.forward;

import io.grpc.BindableService;
import io.grpc.HandlerRegistry;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.sparkgate.config.LimitsConfig;
import io.sparkgate.config.ListenConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The client-facing gRPC server: the listen section's address, TLS, HTTP/2 settings and timeouts, on the
 * proxy's event loops, with what the other parts hook into it (an acceptor for each connection, transport
 * filters, interceptors) and the services it serves.
 */
public final class ClientListener {
  /**
   * A fixed HTTP/2 flow-control window for what clients send (plans, artifact chunks). gRPC's default
   * auto-tuning measures each connection's bandwidth-delay product by sending a PING whenever data arrives
   * and none is outstanding: for a proxy, a PING and its ACK for nearly every small call, each waking the
   * peer. (The backend side is set in {@link BackendTransport}.)
   */
  static final int CLIENT_WINDOW_BYTES = 4 * 1024 * 1024;

  private final ListenConfig listen;
  private final LimitsConfig limits;
  private final EventLoops loops;
  private final List<ServerTransportFilter> filters = new ArrayList<>();
  private final List<ServerInterceptor> interceptors = new ArrayList<>();
  private Acceptor acceptor;
  private int maxHeaderBytes;
  private SslContext tls;

  public ClientListener(ListenConfig listen, LimitsConfig limits, EventLoops loops) {
    this.listen = listen;
    this.limits = limits;
    this.loops = loops;
  }

  /**
   * Sees each connection before gRPC does; header blocks over {@code maxHeaderBytes} are refused by gRPC
   * (smaller limits get a clearer status from an interceptor).
   */
  public ClientListener admit(Acceptor acceptor, int maxHeaderBytes) {
    this.acceptor = acceptor;
    this.maxHeaderBytes = maxHeaderBytes;
    return this;
  }

  public ClientListener filter(ServerTransportFilter filter) {
    filters.add(filter);
    return this;
  }

  /** Interceptors run in the order added, each before any stage. */
  public ClientListener intercept(ServerInterceptor interceptor) {
    interceptors.add(interceptor);
    return this;
  }

  /** Serves TLS with this context; without one, plaintext. */
  public ClientListener tls(SslContext context) {
    this.tls = context;
    return this;
  }

  /** Binds the port and serves {@code services} and, for every other method, {@code methods}. */
  public Server start(HandlerRegistry methods, BindableService... services) throws IOException {
    NettyServerBuilder address =
        NettyServerBuilder.forAddress(new InetSocketAddress(listen.address(), listen.port()));
    NettyServerBuilder builder =
        loops
            .serve(address, java.util.Objects.requireNonNull(acceptor, "admit() an acceptor first"))
            .directExecutor()
            .fallbackHandlerRegistry(methods)
            .maxInboundMessageSize((int) listen.maxInboundMessageBytes())
            // Netty closes a connection whose CONTINUATION frames add up to more still.
            .maxInboundMetadataSize(maxHeaderBytes)
            // HTTP/2 rapid reset: a connection resetting more streams than this is sent GOAWAY.
            .maxRstFramesPerWindow(
                limits.maxStreamResets(), (int) limits.streamResetWindow().toSeconds())
            .flowControlWindow(CLIENT_WINDOW_BYTES)
            .maxConcurrentCallsPerConnection(listen.maxConcurrentStreams())
            .handshakeTimeout(listen.handshakeTimeout().toMillis(), TimeUnit.MILLISECONDS)
            .keepAliveTime(listen.keepaliveTime().toMillis(), TimeUnit.MILLISECONDS)
            .keepAliveTimeout(20, TimeUnit.SECONDS)
            // Spark's JVM client pings idle connections every 10 s or so; let it.
            .permitKeepAliveTime(5, TimeUnit.SECONDS)
            .permitKeepAliveWithoutCalls(true);
    for (BindableService service : services) builder.addService(service);
    filters.forEach(builder::addTransportFilter);
    // gRPC runs the interceptor registered last first.
    for (int i = interceptors.size() - 1; i >= 0; i--) builder.intercept(interceptors.get(i));
    if (tls != null) builder.sslContext(tls);
    return builder.build().start();
  }
}
