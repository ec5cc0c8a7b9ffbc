package io.sparkgate.forward;

import io.grpc.Channel;
import io.grpc.HandlerRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.StatusException;
import java.util.HashMap;
import java.util.Map;
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

  private final Map<String, ServerMethodDefinition<byte[], byte[]>> methods = new HashMap<>();

  /**
   * @param backend the channel to the Spark Connect server
   * @param backendToken bearer token the backend expects, or null
   * @param hooks sees and may change or refuse every message of every call
   */
  public ProxyRegistry(Channel backend, String backendToken, CallHook.Factory hooks) {
    HeaderFilter headers = new HeaderFilter(backendToken);
    for (MethodDescriptor<byte[], byte[]> method : SparkConnectMethods.descriptors().values()) {
      methods.put(
          method.getFullMethodName(),
          ServerMethodDefinition.create(method, new Handler(backend, method, headers, hooks)));
    }
  }

  @Override
  public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
    ServerMethodDefinition<byte[], byte[]> method = methods.get(methodName);
    if (method == null) {
      log.warn("refused unknown method {} (UNIMPLEMENTED)", abbreviate(methodName));
    }
    return method;
  }

  private static String abbreviate(String name) {
    return name.length() <= 200 ? name : name.substring(0, 200) + "...";
  }

  private static final class Handler implements ServerCallHandler<byte[], byte[]> {
    private final Channel backend;
    private final MethodDescriptor<byte[], byte[]> method;
    private final HeaderFilter headers;
    private final CallHook.Factory hooks;

    Handler(Channel backend, MethodDescriptor<byte[], byte[]> method, HeaderFilter headers, CallHook.Factory hooks) {
      this.backend = backend;
      this.method = method;
      this.headers = headers;
      this.hooks = hooks;
    }

    @Override
    public ServerCall.Listener<byte[]> startCall(ServerCall<byte[], byte[]> call, Metadata clientHeaders) {
      CallHook hook;
      try {
        hook = hooks.newCall(method, clientHeaders);
      } catch (StatusException e) {
        call.close(e.getStatus(), e.getTrailers() == null ? new Metadata() : e.getTrailers());
        return new ServerCall.Listener<>() {};
      }
      ForwardingCall forwarding = new ForwardingCall(backend, method, call, headers.toBackend(clientHeaders), hook);
      forwarding.start();
      return forwarding;
    }
  }
}
