package io.sparkgate.tracing;

import io.grpc.Metadata;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.sparkgate.call.AuditEvent;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Route;
import io.sparkgate.call.Stage;
import io.sparkgate.call.StageTimes;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.forward.ProxyRegistry;
import io.sparkgate.inspect.RequestHead;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Opens one SERVER span per call, named like the RPC ({@code spark.connect.SparkConnectService/ExecutePlan}),
 * as the child of the client's W3C {@code traceparent} when it sent one, and gives the backend call this
 * span's context in place of the client's. The span's attributes are read when the call ends from what the
 * other stages recorded in the {@link Call}, as the audit record is; nothing is decoded again. An unsampled
 * span records nothing but still has its trace id, for the audit record and the backend.
 */
final class TracingStage implements Stage {
  static final String TRACEPARENT = "traceparent";
  static final String TRACESTATE = "tracestate";

  private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

  private static final Metadata.Key<String> TRACEPARENT_KEY =
      Metadata.Key.of(TRACEPARENT, Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> TRACESTATE_KEY =
      Metadata.Key.of(TRACESTATE, Metadata.ASCII_STRING_MARSHALLER);

  private static final TextMapGetter<Metadata> FROM_CLIENT =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Metadata headers) {
          return headers.keys();
        }

        @Override
        public String get(Metadata headers, String key) {
          // A client sending two traceparents is not followed by either (W3C: treat as absent).
          // The propagator asks for these two only; their keys are made once.
          Metadata.Key<String> name =
              key.equals(TRACEPARENT)
                  ? TRACEPARENT_KEY
                  : key.equals(TRACESTATE)
                      ? TRACESTATE_KEY
                      : Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER);
          Iterable<String> all = headers == null ? null : headers.getAll(name);
          if (all == null) return null;
          String first = null;
          int n = 0;
          for (String v : all) {
            if (n++ == 0) first = v;
          }
          return n == 1 || key.equals(TRACESTATE) ? first : null;
        }
      };

  private static final TextMapSetter<Metadata> TO_BACKEND =
      (headers, key, value) ->
          headers.put(
              key.equals(TRACEPARENT)
                  ? TRACEPARENT_KEY
                  : key.equals(TRACESTATE)
                      ? TRACESTATE_KEY
                      : Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER),
              value);

  // The span's attributes: OpenTelemetry's RPC conventions, then the audit record's fields under
  // sparkgate.
  static final AttributeKey<String> RPC_SYSTEM = AttributeKey.stringKey("rpc.system");
  static final AttributeKey<String> RPC_SERVICE = AttributeKey.stringKey("rpc.service");
  static final AttributeKey<String> RPC_METHOD = AttributeKey.stringKey("rpc.method");
  static final AttributeKey<Long> GRPC_STATUS = AttributeKey.longKey("rpc.grpc.status_code");
  static final AttributeKey<String> CLIENT_ADDRESS = AttributeKey.stringKey("client.address");
  static final AttributeKey<Long> CLIENT_PORT = AttributeKey.longKey("client.port");
  static final AttributeKey<String> PRINCIPAL = AttributeKey.stringKey("sparkgate.principal");
  static final AttributeKey<String> TENANT = AttributeKey.stringKey("sparkgate.tenant");
  static final AttributeKey<String> AUTH_FAILURE = AttributeKey.stringKey("sparkgate.auth_failure");
  static final AttributeKey<String> SESSION_ID = AttributeKey.stringKey("sparkgate.session_id");
  static final AttributeKey<String> OPERATION_ID = AttributeKey.stringKey("sparkgate.operation_id");
  static final AttributeKey<String> POOL = AttributeKey.stringKey("sparkgate.pool");
  static final AttributeKey<String> BACKEND = AttributeKey.stringKey("sparkgate.backend");
  static final AttributeKey<String> DECISION = AttributeKey.stringKey("sparkgate.decision");
  static final AttributeKey<String> RULE = AttributeKey.stringKey("sparkgate.rule");
  static final AttributeKey<String> REFUSAL = AttributeKey.stringKey("sparkgate.refusal");
  static final AttributeKey<String> QUOTA = AttributeKey.stringKey("sparkgate.quota");
  static final AttributeKey<List<String>> SHADOW =
      AttributeKey.stringArrayKey("sparkgate.shadow_decisions");
  static final AttributeKey<Long> BYTES_IN = AttributeKey.longKey("sparkgate.bytes_in");
  static final AttributeKey<Long> BYTES_OUT = AttributeKey.longKey("sparkgate.bytes_out");
  static final AttributeKey<Long> MESSAGES_IN = AttributeKey.longKey("sparkgate.messages_in");
  static final AttributeKey<Long> MESSAGES_OUT = AttributeKey.longKey("sparkgate.messages_out");
  static final AttributeKey<Long> CHECKS_US = AttributeKey.longKey("sparkgate.checks_us");
  static final AttributeKey<Long> STAGE_US = AttributeKey.longKey("sparkgate.stage_us");

  private final Tracer tracer;

  TracingStage(Tracer tracer) {
    this.tracer = tracer;
  }

  @Override
  public CallHook open(Call call) {
    Context parent = W3C.extract(Context.root(), call.headers(), FROM_CLIENT);
    SpanBuilder builder =
        tracer
            .spanBuilder(ProxyRegistry.SERVICE_NAME + "/" + call.method())
            .setParent(parent)
            .setSpanKind(SpanKind.SERVER)
            .setAttribute(RPC_SYSTEM, "grpc")
            .setAttribute(RPC_SERVICE, ProxyRegistry.SERVICE_NAME)
            .setAttribute(RPC_METHOD, call.method());
    Span span = builder.startSpan();
    if (span.isRecording()
        && call.remoteAddress() instanceof InetSocketAddress peer
        && peer.getAddress() != null) {
      span.setAttribute(CLIENT_ADDRESS, peer.getAddress().getHostAddress());
      span.setAttribute(CLIENT_PORT, (long) peer.getPort());
    }
    if (span.isRecording()) {
      call.stageTimes(new StageTimes());
    }
    SpanContext context = span.getSpanContext();
    if (context.isValid()) {
      call.audit().traceId(context.getTraceId());
    }
    return new Traced(call, span);
  }

  /**
   * One call's span. Counts what passes (as the audit stage does: the two hooks are independent) and times
   * the stages' checks of each request message: this hook is first, so between its {@link #onRequest} and
   * {@link #onAccepted} every other stage has handled the message.
   */
  private static final class Traced implements CallHook {
    private final Call call;
    private final Span span;
    private final boolean recording;
    private final AtomicBoolean ended = new AtomicBoolean();
    // One writer per direction at a time (gRPC delivers requests in turn; sends do not overlap).
    private volatile long bytesIn;
    private volatile long messagesIn;
    private volatile long bytesOut;
    private volatile long messagesOut;
    private volatile long requestNanos;
    private volatile long checkNanos;

    Traced(Call call, Span span) {
      this.call = call;
      this.span = span;
      this.recording = span.isRecording();
    }

    @Override
    public byte[] onRequest(byte[] message) {
      bytesIn += message.length;
      messagesIn++;
      if (recording) requestNanos = System.nanoTime();
      return message;
    }

    @Override
    public void onAccepted(byte[] forwarded) {
      if (!recording) return;
      long took = System.nanoTime() - requestNanos;
      checkNanos += took;
      if (messagesIn == 1) {
        span.addEvent("checked");
      }
    }

    @Override
    public Payload onResponse(Payload message) {
      bytesOut += message.length();
      if (messagesOut++ == 0 && recording) {
        span.addEvent("first response");
      }
      return message;
    }

    @Override
    public void toBackend(Metadata headers) {
      // The client's context (when forward_headers lists it) is replaced: Spark's spans are ours'
      // children.
      headers.removeAll(TRACEPARENT_KEY);
      headers.removeAll(TRACESTATE_KEY);
      W3C.inject(Context.root().with(span), headers, TO_BACKEND);
    }

    @Override
    public void onClose(Status status) {
      if (!ended.compareAndSet(false, true)) return;
      if (recording) {
        describe(status);
      }
      span.end();
    }

    private void describe(Status status) {
      span.setAttribute(GRPC_STATUS, (long) status.getCode().value());
      if (!status.isOk()) {
        // Any status but OK: the client did not get what it asked for (a refusal included).
        span.setStatus(StatusCode.ERROR, status.getCode().name());
      }
      Principal principal = call.principal();
      if (principal != null) {
        span.setAttribute(PRINCIPAL, principal.name());
        principal.tenant().ifPresent(t -> span.setAttribute(TENANT, t));
      }
      RequestHead head = call.head();
      setIfPresent(SESSION_ID, head.sessionId());
      setIfPresent(OPERATION_ID, head.operationId());
      Route route = call.route();
      if (route != null) {
        span.setAttribute(BACKEND, route.backend());
      }
      setIfPresent(POOL, call.pool());
      Call.Decided decided = call.decided();
      if (decided != null) {
        setIfPresent(DECISION, decided.effect());
        setIfPresent(RULE, decided.rule());
      }
      AuditEvent.Sealed recorded = call.audit().snapshot();
      setIfPresent(AUTH_FAILURE, recorded.authFailure());
      setIfPresent(REFUSAL, recorded.refusal());
      setIfPresent(QUOTA, recorded.quota());
      if (!recorded.shadowDecisions().isEmpty()) {
        span.setAttribute(SHADOW, recorded.shadowDecisions());
      }
      span.setAttribute(BYTES_IN, bytesIn);
      span.setAttribute(BYTES_OUT, bytesOut);
      span.setAttribute(MESSAGES_IN, messagesIn);
      span.setAttribute(MESSAGES_OUT, messagesOut);
      span.setAttribute(CHECKS_US, TimeUnit.NANOSECONDS.toMicros(checkNanos));
      StageTimes times = call.stageTimes();
      if (times != null) {
        // One event per stage, in the order a call meets them, with its time over the whole call.
        times
            .snapshot()
            .forEach(
                (stage, nanos) ->
                    span.addEvent(
                        "stage " + stage,
                        io.opentelemetry.api.common.Attributes.of(
                            STAGE_US, TimeUnit.NANOSECONDS.toMicros(nanos))));
      }
    }

    private void setIfPresent(AttributeKey<String> key, String value) {
      if (value != null && !value.isEmpty()) span.setAttribute(key, value);
    }
  }
}
