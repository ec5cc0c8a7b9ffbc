package io.sparkgate.forward;

import io.grpc.Attributes;
import io.grpc.Channel;
import io.grpc.HandlerRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.StatusException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves incoming method names to forwarding handlers, for the allowed Spark Connect methods only.
 * Unknown methods and services get gRPC's UNIMPLEMENTED, and a log line so operators notice new clients.
 */
public final class ProxyRegistry extends HandlerRegistry {
  private static final Logger log = LoggerFactory.getLogger(ProxyRegistry.class);

  /** The service name the health service reports on, besides the overall "" status. */
  public static final String SERVICE_NAME = SparkConnectMethods.SERVICE;

  private static final Map<String, MethodDescriptor<byte[], Payload>> DESCRIPTORS =
      SparkConnectMethods.descriptors();

  /** The {@code :authority} the client sent (the host it dialled), in the transport attributes hooks see. */
  public static final Attributes.Key<String> AUTHORITY =
      Attributes.Key.create("sparkgate.authority");

  private final Map<String, ServerMethodDefinition<byte[], Payload>> methods = new HashMap<>();
  private final LongAdder unknown = new LongAdder();
  private final BufferedBytes buffered;

  /**
   * Forwards each call to the backend its hooks chose ({@link CallHook#backend()}), over that backend's
   * connection on the event loop the call arrived on.
   *
   * @param loops the server's event loops and their backend channels
   * @param pool runs the request side of calls whose messages are too large to handle on an event loop
   * @param tokens bearer token of each backend that expects one, by {@code host:port}
   * @param forwardHeaders the client headers that reach the backend ({@code listen.forward_headers})
   * @param hooks sees and may change or refuse every message of every call
   */
  public ProxyRegistry(
      EventLoops loops,
      Executor pool,
      Map<String, String> tokens,
      List<String> forwardHeaders,
      CallHook.Factory hooks) {
    this(
        address -> address == null ? loops.backendForCurrentThread() : loops.backend(address),
        pool,
        new HeaderFilter(tokens, tokens.get(loops.firstAddress()), forwardHeaders),
        hooks,
        new BufferedBytes());
  }

  /** As above, over {@code backends}' loops with their tokens. */
  public ProxyRegistry(
      Backends backends, Executor pool, List<String> forwardHeaders, CallHook.Factory hooks) {
    this(backends.loops(), pool, backends.tokens(), forwardHeaders, hooks);
  }

  /** Forwards every call over one channel, on the threads gRPC calls back on (tests). */
  public ProxyRegistry(Channel backend, String backendToken, CallHook.Factory hooks) {
    this(
        address -> backend,
        Runnable::run,
        new HeaderFilter(backendToken),
        hooks,
        new BufferedBytes());
  }

  private ProxyRegistry(
      Function<String, Channel> backend,
      Executor pool,
      HeaderFilter headers,
      CallHook.Factory hooks,
      BufferedBytes buffered) {
    this.buffered = buffered;
    for (MethodDescriptor<byte[], Payload> method : DESCRIPTORS.values()) {
      methods.put(
          method.getFullMethodName(),
          ServerMethodDefinition.create(
              SparkConnectMethods.clientStreaming(method),
              new Handler(backend, pool, method, headers, hooks, buffered)));
    }
  }

  /** The forwarded Spark Connect method of this bare name ({@code ExecutePlan}), or null. */
  public static MethodDescriptor<byte[], Payload> method(String bareName) {
    return DESCRIPTORS.get(SERVICE_NAME + "/" + bareName);
  }

  @Override
  public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
    ServerMethodDefinition<byte[], Payload> method = methods.get(methodName);
    if (method == null) {
      unknown.increment();
      log.warn("refused unknown method {} (UNIMPLEMENTED)", abbreviate(methodName));
    }
    return method;
  }

  /** Message bytes held between clients and backends now ({@code limits.max_buffered_bytes}). */
  public BufferedBytes buffered() {
    return buffered;
  }

  /** Calls refused because they named no Spark Connect method (a client too new, or a scanner). */
  public long unknownMethods() {
    return unknown.sum();
  }

  private static String abbreviate(String name) {
    return name.length() <= 200 ? name : name.substring(0, 200) + "...";
  }

  private static final class Handler implements ServerCallHandler<byte[], Payload> {
    private final Function<String, Channel> backend;
    private final Executor pool;
    private final MethodDescriptor<byte[], Payload> method;
    private final HeaderFilter headers;
    private final CallHook.Factory hooks;
    private final BufferedBytes buffered;

    Handler(
        Function<String, Channel> backend,
        Executor pool,
        MethodDescriptor<byte[], Payload> method,
        HeaderFilter headers,
        CallHook.Factory hooks,
        BufferedBytes buffered) {
      this.backend = backend;
      this.pool = pool;
      this.method = method;
      this.headers = headers;
      this.hooks = hooks;
      this.buffered = buffered;
    }

    @Override
    public ServerCall.Listener<byte[]> startCall(
        ServerCall<byte[], Payload> call, Metadata clientHeaders) {
      CallHook hook;
      try {
        String authority = call.getAuthority();
        Attributes transport =
            authority == null
                ? call.getAttributes()
                : call.getAttributes().toBuilder().set(AUTHORITY, authority).build();
        hook = hooks.newCall(method, clientHeaders, transport);
      } catch (StatusException e) {
        call.close(e.getStatus(), e.getTrailers() == null ? new Metadata() : e.getTrailers());
        return new ServerCall.Listener<>() {};
      }
      ForwardingCall forwarding =
          new ForwardingCall(backend, method, call, clientHeaders, headers, hook, pool, buffered);
      forwarding.start();
      return forwarding;
    }
  }
}
