package io.sparkgate.bench;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Headers;
import io.sparkgate.Sparkgate;
import io.sparkgate.audit.AuditLog;
import io.sparkgate.audit.AuditStage;
import io.sparkgate.auth.Authentication;
import io.sparkgate.call.Pipeline;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.lakehouse.IcebergTimeTravelPolicyRewriter;
import io.sparkgate.policy.PolicyStage;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;

/**
 * For {@link FrameRelay} {@code --config}: Sparkgate's per-call work (its stages: audit, authenticate,
 * inspect, decide, route, and the audit record) run on each relayed call as the proxy runs them, from the
 * same configuration. It answers "what would a proxy that forwards below gRPC's API cost with Sparkgate's
 * features?" without building one. Not a proxy: every call is taken for an ExecutePlan, and response
 * messages are not shown to the stages (the audit counts no rows).
 */
final class RelayFeatures {
  private final Pipeline stages;

  private RelayFeatures(Pipeline stages) {
    this.stages = stages;
  }

  /**
   * Loads a Sparkgate configuration with auth, policy and audit sections; its backend is asked for the profile.
   * Runs until the relay's process ends (the bench stops it), like the proxy's own stages.
   */
  static RelayFeatures start(Path configFile, int backendPort) throws IOException {
    ProxyConfig config = ProxyConfig.load(configFile);
    if (!config.policy().enabled() || !config.audit().enabled()) {
      throw new IllegalArgumentException(
          configFile + ": the relay's features need policy and audit sections");
    }
    ManagedChannel backend =
        ManagedChannelBuilder.forAddress("127.0.0.1", backendPort).usePlaintext().build();
    PolicyStage policy = PolicyStage.start(config, backend, IcebergTimeTravelPolicyRewriter.all());
    AuditStage audit =
        new AuditStage(AuditLog.open(config.audit(), Clock.systemUTC()), Clock.systemUTC());
    return new RelayFeatures(
        Pipeline.of(Sparkgate.stages(config, Authentication.create(config.auth()), audit, policy)));
  }

  /** A call whose request headers have arrived. */
  Call newCall(Http2Headers headers, SocketAddress remote) {
    return new Call(metadata(headers), remote);
  }

  /** The headers as gRPC's server gives them to the stages: everything but the pseudo-headers. */
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
    private final io.sparkgate.call.Call call;
    private CallHook hook;
    private Status refusal;
    private boolean ended;

    Call(Metadata headers, SocketAddress remote) {
      this.call =
          new io.sparkgate.call.Call(
              "ExecutePlan",
              headers,
              Attributes.newBuilder().set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, remote).build());
    }

    /** Runs the request through the stages: the bytes to forward, or null when refused. */
    byte[] onRequest(byte[] message) {
      try {
        hook = stages.open(call); // a refusal here has closed the stages opened before
      } catch (StatusException e) {
        refusal = e.getStatus();
        ended = true;
        return null;
      }
      try {
        byte[] forwarded = hook.onRequest(message);
        hook.onAccepted(forwarded);
        hook.onHalfClose();
        return forwarded;
      } catch (StatusException e) {
        refusal = e.getStatus();
        onEnd(refusal);
        return null;
      }
    }

    /** The status a refusal closed the call with, or null. */
    Status refusal() {
      return refusal;
    }

    /** The backend's answer ended the call (or a stage refused it): its record is written. */
    void onEnd(Status status) {
      if (hook != null && !ended) {
        ended = true;
        hook.onClose(status);
      }
    }
  }
}
