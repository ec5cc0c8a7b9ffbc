package io.sparkgate.forward;

import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.stub.MetadataUtils;
import io.sparkgate.config.BackendConfig;
import io.sparkgate.config.BackendTlsConfig;
import io.sparkgate.config.DnsBackendConfig;
import io.sparkgate.config.PoolConfig;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.tls.BackendTls;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The proxy's side of its backends: the event loops every call runs on, a channel to each backend on each
 * loop (built on first use; over TLS for a backend with {@code tls}, with the same material for every
 * channel, so the proxy's own calls are as protected as clients'), and each backend's token, which the proxy's own calls (health checks, the
 * profiler, the admin API's actions) send as clients' calls do.
 */
public final class Backends implements AutoCloseable {
  /** Spark's error trailers carry JSON error details; grpc-java's 8 KiB default is too small for them. */
  private static final int MAX_BACKEND_METADATA_BYTES = 1024 * 1024;

  private final EventLoops loops;
  private final Map<String, String> tokens;
  private final BackendTls tls;

  /** Each backend's settings and TLS material, by address: the listed ones, and those DNS found. */
  private final Map<String, BackendConfig> configs;

  private final Map<String, SslContext> contexts;

  /** The TLS material of each {@code dns:} entry with tls, by {@link #dnsKey}: shared by all it finds. */
  private final Map<String, SslContext> dnsContexts;

  private Backends(
      EventLoops loops,
      Map<String, String> tokens,
      BackendTls tls,
      Map<String, BackendConfig> configs,
      Map<String, SslContext> contexts,
      Map<String, SslContext> dnsContexts) {
    this.loops = loops;
    this.tokens = tokens;
    this.tls = tls;
    this.configs = configs;
    this.contexts = contexts;
    this.dnsContexts = dnsContexts;
  }

  /**
   * Starts the event loops of {@code listen.event_loops} for the backends of every pool, with the TLS
   * material of those that have {@code tls} loaded now: a file that does not load stops the start.
   */
  public static Backends start(ProxyConfig config) {
    Map<String, BackendConfig> backends = new ConcurrentHashMap<>();
    Map<String, String> tokens = new ConcurrentHashMap<>();
    Map<String, SslContext> contexts = new ConcurrentHashMap<>();
    Map<String, SslContext> dnsContexts = new HashMap<>();
    BackendTls tls = new BackendTls();
    try {
      for (PoolConfig pool : config.pools().values()) {
        for (BackendConfig b : pool.backends()) {
          backends.putIfAbsent(
              b.address(), b); // one address in two pools: the first entry's settings
          b.token().ifPresent(t -> tokens.put(b.address(), t.reveal()));
          b.tls().ifPresent(t -> contexts.put(b.address(), context(tls, b.address(), t)));
        }
        for (DnsBackendConfig d : pool.dns()) {
          d.backend()
              .tls()
              .ifPresent(t -> dnsContexts.put(dnsKey(pool.name(), d), context(tls, d.source(), t)));
        }
      }
      int maxMessage = (int) config.listen().maxInboundMessageBytes();
      EventLoops loops =
          EventLoops.start(
              config.listen().eventLoops(),
              config.listen().eventLoopSpin(),
              address -> channel(address, maxMessage, backends.get(address), contexts.get(address)),
              config.firstBackend().address());
      return new Backends(loops, tokens, tls, backends, contexts, Map.copyOf(dnsContexts));
    } catch (RuntimeException e) {
      tls.close();
      throw e;
    }
  }

  private static SslContext context(BackendTls tls, String address, BackendTlsConfig config) {
    return tls.context(
        "backend " + address,
        config.caFile().orElse(null),
        config.certFile().orElse(null),
        config.keyFile().orElse(null),
        config.reloadInterval());
  }

  public EventLoops loops() {
    return loops;
  }

  /** The token of each backend that has one, by {@code host:port}: the configured ones and engines'. */
  public Map<String, String> tokens() {
    return Collections.unmodifiableMap(tokens);
  }

  /** A backend Sparkgate started (an engine) checks {@code token}: calls to it send it from now on. */
  public void register(String address, String token) {
    tokens.put(address, token);
  }

  /**
   * The engine at {@code address} has stopped: its token goes (a later engine there has its own), and so do
   * its channels, so engines that come and go leave nothing behind.
   */
  public void unregister(String address) {
    tokens.remove(address);
    loops.forget(address);
  }

  private static String dnsKey(String pool, DnsBackendConfig entry) {
    return pool + "|" + entry.source();
  }

  /**
   * DNS found a backend at {@code host:port} through {@code entry} of {@code pool}: calls to it are made with
   * the entry's settings (token, timeouts, tls) from now on. Call before any call can be routed to it.
   */
  public void found(String pool, DnsBackendConfig entry, String host, int port) {
    BackendConfig b = entry.backend().at(host, port);
    String address = b.address();
    configs.put(address, b);
    SslContext context = dnsContexts.get(dnsKey(pool, entry));
    if (context != null) contexts.put(address, context);
    b.token().ifPresent(t -> tokens.put(address, t.reveal()));
  }

  /**
   * A backend DNS found is no longer named: its channels close once the calls on them end. Its settings stay
   * (a late call, or the address named again, is still reached as configured) until {@link #drop}.
   */
  public void left(String address) {
    loops.forget(address);
  }

  /** Forgets a backend that left long ago, settings and all (pod addresses come and go). */
  public void drop(String address) {
    loops.forget(address);
    tokens.remove(address);
    contexts.remove(address);
    configs.remove(address);
  }

  /** A channel to the backend at {@code address} that sends its token, for the proxy's own calls. */
  public Channel channel(String address) {
    String token = tokens.get(address);
    Channel channel = loops.backend(address);
    if (token == null) return channel;
    Metadata bearer = new Metadata();
    bearer.put(
        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(bearer));
  }

  /**
   * Asks every connection to the backend at {@code address} to reconnect now rather than wait out gRPC's
   * reconnect backoff: the health check calls it when the backend is down or has just come back.
   */
  public void reconnect(String address) {
    loops.resetBackoff(address);
  }

  @Override
  public void close() {
    loops.close();
    tls.close();
  }

  /** {@code tls} null: plaintext. */
  private static NettyChannelBuilder channel(
      String address, int maxMessage, BackendConfig backend, SslContext tls) {
    int colon = address.lastIndexOf(':');
    String host = address.substring(0, colon);
    if (host.startsWith("[")) host = host.substring(1, host.length() - 1);
    int port = Integer.parseInt(address.substring(colon + 1));
    NettyChannelBuilder builder = NettyChannelBuilder.forAddress(host, port);
    Duration connect =
        backend == null ? BackendConfig.DEFAULT_CONNECT_TIMEOUT : backend.connectTimeout();
    Duration handshake =
        backend == null ? BackendConfig.DEFAULT_HANDSHAKE_TIMEOUT : backend.handshakeTimeout();
    if (tls == null) {
      BackendTransport.plaintext(builder, connect, handshake);
    } else {
      String serverName = backend.tls().orElseThrow().serverName();
      BackendTransport.tls(builder, tls, serverName, port, connect, handshake);
    }
    return builder
        .maxInboundMessageSize(maxMessage)
        .maxInboundMetadataSize(MAX_BACKEND_METADATA_BYTES)
        // Backend callbacks only hand bytes to the client's transport: no need for a thread hop.
        .directExecutor()
        // The client retries if it wants to: a proxy replaying an ExecutePlan could run it twice,
        // and gRPC's retry machinery buffers every message of every call even when it never
        // retries.
        .disableRetry();
  }
}
