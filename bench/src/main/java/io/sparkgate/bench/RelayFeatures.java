package io.sparkgate.bench;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Headers;
import io.sparkgate.audit.AuditInterceptor;
import io.sparkgate.audit.AuditLog;
import io.sparkgate.auth.Authentication;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.CallHooks;
import io.sparkgate.policy.PolicyStage;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;

/**
 * For {@link FrameRelay} {@code --config}: Sparkgate's per-call work (the audit and auth interceptors, the
 * identity and policy hooks, the audit record) run on each relayed call as the proxy runs them, from the
 * same configuration. It answers "what would a proxy that forwards below gRPC's API cost with Sparkgate's
 * features?" without building one: the interceptors see a stand-in {@link ServerCall} instead of gRPC's.
 * Not a proxy: every call is taken for an ExecutePlan, and response messages are not shown to the audit
 * (it counts no rows).
 */
final class RelayFeatures {
  private static final MethodDescriptor<byte[], byte[]> EXECUTE_PLAN = SecurityFixtures.EXECUTE_PLAN;

  private final Authentication auth;
  private final AuditInterceptor audit;
  private final CallHook.Factory hooks;

  private RelayFeatures(Authentication auth, PolicyStage policy, AuditLog auditLog) {
    this.auth = auth;
    this.audit = new AuditInterceptor(auditLog, Clock.systemUTC());
    this.hooks = CallHooks.chain(List.of(auth.hooks(), policy.hook()));
  }

  /**
   * Loads a Sparkgate configuration with auth, policy and audit sections; its backend is asked for the profile.
   * Runs until the relay's process ends (the bench stops it), like the proxy's own stages.
   */
  static RelayFeatures start(Path configFile, int backendPort) throws IOException {
    ProxyConfig config = ProxyConfig.load(configFile);
    if (!config.policy().enabled() || !config.audit().enabled()) {
      throw new IllegalArgumentException(configFile + ": the relay's features need policy and audit sections");
    }
    ManagedChannel backend = ManagedChannelBuilder.forAddress("127.0.0.1", backendPort).usePlaintext().build();
    return new RelayFeatures(Authentication.create(config.auth()), PolicyStage.start(config, backend),
        AuditLog.open(config.audit(), Clock.systemUTC()));
  }

  /** A call whose request headers have arrived. */
  Call newCall(Http2Headers headers, SocketAddress remote) {
    return new Call(metadata(headers), remote);
  }

  /** The headers as gRPC's server gives them to interceptors: everything but the pseudo-headers. */
  private static Metadata metadata(Http2Headers headers) {
    Metadata m = new Metadata();
    for (Map.Entry<CharSequence, CharSequence> e : headers) {
      String name = e.getKey().toString();
      if (name.startsWith(":") || name.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
        continue;
      }
      m.put(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER), e.getValue().toString());
    }
    return m;
  }

  /** One relayed call, from its request to its end. */
  final class Call {
    private final Metadata headers;
    /** Stands in for gRPC's server call: answers what the interceptors ask and records the close. */
    private final SecurityFixtures.FakeCall call;
    /** The call as the innermost handler sees it: closing it closes every interceptor's view, audit's last. */
    private ServerCall<byte[], byte[]> inner;
    private byte[] forwarded;

    Call(Metadata headers, SocketAddress remote) {
      this.headers = headers;
      this.call = new SecurityFixtures.FakeCall(
          Attributes.newBuilder().set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, remote).build());
    }

    /** Runs the request through the interceptors and hooks: the bytes to forward, or null when refused. */
    byte[] onRequest(byte[] message) {
      ServerCallHandler<byte[], byte[]> hooked = (c, h) -> {
        inner = c;
        CallHook hook;
        try {
          hook = hooks.newCall(EXECUTE_PLAN, h);
        } catch (StatusException e) {
          c.close(e.getStatus(), new Metadata());
          return new ServerCall.Listener<>() {};
        }
        return new ServerCall.Listener<>() {
          @Override
          public void onMessage(byte[] m) {
            try {
              forwarded = hook.onRequest(m);
            } catch (StatusException e) {
              c.close(e.getStatus(), new Metadata());
            }
          }

          @Override
          public void onHalfClose() {
            try {
              hook.onHalfClose();
            } catch (StatusException e) {
              c.close(e.getStatus(), new Metadata());
            }
          }
        };
      };
      ServerCall.Listener<byte[]> listener =
          audit.interceptCall(call, headers, (c, h) -> auth.interceptor().interceptCall(c, h, hooked));
      listener.onMessage(message);
      listener.onHalfClose();
      return refusal() == null ? forwarded : null;
    }

    /** The status a refusal closed the call with, or null. */
    Status refusal() {
      return call.closed;
    }

    /** The backend's answer ended the call: its record is written. */
    void onEnd(Status status) {
      if (inner != null && call.closed == null) {
        inner.close(status, new Metadata());
      }
    }
  }
}
