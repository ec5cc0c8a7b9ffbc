package io.sparkgate.tracing;

import static io.sparkgate.testing.WireBytes.concat;
import static io.sparkgate.testing.WireBytes.field;
import static io.sparkgate.testing.WireBytes.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.sparkgate.call.Call;
import io.sparkgate.call.Pipeline;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Route;
import io.sparkgate.config.TracingConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.ProxyRegistry;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.inspect.RequestHead;
import io.sparkgate.testing.FakeSparkConnect;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tracing stage in front of a fake backend over real (in-process) gRPC: the span continues the client's
 * trace, the backend gets Sparkgate's span as its parent, the span carries what the stages recorded, and a
 * refusal shows its rule and an error status.
 */
final class TracingStageTest {
  private static final String CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String CLIENT_SPAN = "00f067aa0ba902b7";
  private static final Metadata.Key<String> TRACEPARENT =
      Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);

  /** How long the allowing stage holds each request message: its event must show at least this. */
  private static final long STAGE_NANOS = 5_000_000;

  private final List<SpanData> exported = new CopyOnWriteArrayList<>();
  private final FakeSparkConnect backend = new FakeSparkConnect();
  private final AtomicReference<Call> seen = new AtomicReference<>();
  private final Semaphore closed = new Semaphore(0);
  private Tracing tracing;
  private Server backendServer;
  private Server proxy;
  private ManagedChannel backendChannel;
  private ManagedChannel channel;

  @AfterEach
  void stop() {
    if (channel != null) channel.shutdownNow();
    if (proxy != null) proxy.shutdownNow();
    if (backendChannel != null) backendChannel.shutdownNow();
    if (backendServer != null) backendServer.shutdownNow();
    if (tracing != null) tracing.close();
  }

  /** A proxy whose stages are the tracing stage and one that records as the real ones do. */
  private void start(double sampler, boolean refuse) throws Exception {
    tracing =
        Tracing.start(
            new TracingConfig(
                URI.create("http://127.0.0.1:4317"),
                TracingConfig.Protocol.GRPC,
                sampler,
                Map.of(),
                "sparkgate-test"),
            new Collecting());
    String backendName = InProcessServerBuilder.generateName();
    backendServer =
        InProcessServerBuilder.forName(backendName)
            .fallbackHandlerRegistry(backend)
            .build()
            .start();
    backendChannel = InProcessChannelBuilder.forName(backendName).build();
    Pipeline stages =
        Pipeline.of(
            tracing.stage(),
            tracing.timed(
                "decide",
                call ->
                    new CallHook() {
                      @Override
                      public byte[] onRequest(byte[] message) throws io.grpc.StatusException {
                        seen.set(call);
                        call.principal(
                            new Principal(
                                "dana",
                                List.of("analysts"),
                                Optional.of("acme"),
                                Principal.Method.STATIC_TOKEN,
                                Optional.empty(),
                                Optional.empty()));
                        call.head(RequestHead.read(call.method(), message));
                        call.route(new Route("analytics", "127.0.0.1:15002", false));
                        if (refuse) {
                          call.decided("deny", "no-python-udf");
                          call.audit().refusal("no-python-udf: Python UDFs are not allowed");
                          throw Status.PERMISSION_DENIED.withDescription("refused").asException();
                        }
                        call.decided("allow", "analysts-read");
                        long until = System.nanoTime() + STAGE_NANOS; // a stage that takes its time
                        while (System.nanoTime() < until) {
                          java.util.concurrent.locks.LockSupport.parkNanos(
                              until - System.nanoTime());
                        }
                        return message;
                      }

                      @Override
                      public void onClose(Status status) {
                        closed.release(); // after the tracing stage's: its span has ended
                      }
                    }));
    String proxyName = InProcessServerBuilder.generateName();
    proxy =
        InProcessServerBuilder.forName(proxyName)
            .fallbackHandlerRegistry(new ProxyRegistry(backendChannel, null, stages))
            .build()
            .start();
    channel = InProcessChannelBuilder.forName(proxyName).build();
  }

  private byte[] config(Metadata headers) {
    return ClientCalls.blockingUnaryCall(
        io.grpc.ClientInterceptors.intercept(
            channel, MetadataUtils.newAttachHeadersInterceptor(headers)),
        TestMethods.get("Config"),
        CallOptions.DEFAULT,
        concat(
            field(1, utf8("5f0c1b9e-0000-4000-8000-000000000001")),
            field(2, field(1, utf8("dana")))));
  }

  /** Waits for {@code calls} calls to end (the client may see the status first), then flushes. */
  private void flush(int calls) throws InterruptedException {
    assertTrue(closed.tryAcquire(calls, 10, TimeUnit.SECONDS));
    tracing.close();
  }

  private static Metadata clientTrace(String flags) {
    Metadata headers = new Metadata();
    headers.put(TRACEPARENT, "00-" + CLIENT_TRACE + "-" + CLIENT_SPAN + "-" + flags);
    return headers;
  }

  @Test
  void clientTrace_continued_backendGetsSparkgatesSpanAsParent() throws Exception {
    start(0.0, false); // sampled because the client's trace is, whatever the ratio
    config(clientTrace("01"));
    String sent = backend.lastHeaders.get().get(TRACEPARENT);
    flush(1);

    assertEquals(1, exported.size(), exported.toString());
    SpanData span = exported.get(0);
    assertEquals("spark.connect.SparkConnectService/Config", span.getName());
    assertEquals(SpanKind.SERVER, span.getKind());
    assertEquals(CLIENT_TRACE, span.getTraceId());
    assertEquals(CLIENT_SPAN, span.getParentSpanId());
    assertEquals("00-" + CLIENT_TRACE + "-" + span.getSpanId() + "-01", sent);
    assertNotEquals(CLIENT_SPAN, span.getSpanId());
    assertEquals(CLIENT_TRACE, seen.get().audit().traceId());

    assertEquals("dana", span.getAttributes().get(TracingStage.PRINCIPAL));
    assertEquals("acme", span.getAttributes().get(TracingStage.TENANT));
    assertEquals(
        "5f0c1b9e-0000-4000-8000-000000000001", span.getAttributes().get(TracingStage.SESSION_ID));
    assertEquals("analytics", span.getAttributes().get(TracingStage.POOL));
    assertEquals("127.0.0.1:15002", span.getAttributes().get(TracingStage.BACKEND));
    assertEquals("allow", span.getAttributes().get(TracingStage.DECISION));
    assertEquals("analysts-read", span.getAttributes().get(TracingStage.RULE));
    assertEquals(0L, span.getAttributes().get(TracingStage.GRPC_STATUS));
    assertTrue(span.getAttributes().get(TracingStage.BYTES_IN) > 0);
    assertEquals(2L, span.getAttributes().get(TracingStage.BYTES_OUT)); // "ok"
    assertEquals(StatusCode.UNSET, span.getStatus().getStatusCode());
    assertEquals(
        List.of("checked", "first response", "stage decide"),
        span.getEvents().stream().map(e -> e.getName()).toList());
    long stageUs = span.getEvents().get(2).getAttributes().get(TracingStage.STAGE_US);
    assertTrue(stageUs >= STAGE_NANOS / 1000, "stage decide took " + stageUs + " us");
  }

  @Test
  void refusal_errorStatus_withItsRule_backendNeverCalled() throws Exception {
    start(1.0, true);
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> config(new Metadata()));
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    flush(1);

    assertNull(backend.lastMethod.get());
    SpanData span = exported.get(0);
    assertEquals(StatusCode.ERROR, span.getStatus().getStatusCode());
    assertEquals("PERMISSION_DENIED", span.getStatus().getDescription());
    assertEquals("deny", span.getAttributes().get(TracingStage.DECISION));
    assertEquals("no-python-udf", span.getAttributes().get(TracingStage.RULE));
    assertEquals(7L, span.getAttributes().get(TracingStage.GRPC_STATUS));
    assertTrue(span.getAttributes().get(TracingStage.REFUSAL).startsWith("no-python-udf"));
    assertEquals("", span.getParentSpanId().replace("0", ""), "a new trace: no parent");
  }

  @Test
  void unsampled_nothingExported_butTheBackendAndTheAuditGetItsTraceId() throws Exception {
    start(0.0, false);
    config(new Metadata());
    String sent = backend.lastHeaders.get().get(TRACEPARENT);
    flush(1);

    assertEquals(List.of(), exported);
    String traceId = seen.get().audit().traceId();
    assertEquals(32, traceId.length());
    assertTrue(sent.startsWith("00-" + traceId + "-") && !sampled(sent), sent);
  }

  @Test
  void clientTraceNotSampled_followed() throws Exception {
    start(1.0, false);
    config(clientTrace("00"));
    String sent = backend.lastHeaders.get().get(TRACEPARENT);
    flush(1);

    assertEquals(List.of(), exported);
    assertTrue(sent.startsWith("00-" + CLIENT_TRACE + "-") && !sampled(sent), sent);
    assertNotEquals("00-" + CLIENT_TRACE + "-" + CLIENT_SPAN + "-00", sent);
  }

  @Test
  void twoOrMalformedTraceparents_aNewTrace() throws Exception {
    start(1.0, false);
    Metadata two = clientTrace("01");
    two.put(TRACEPARENT, "00-" + CLIENT_TRACE + "-" + CLIENT_SPAN + "-01");
    config(two);
    Metadata malformed = new Metadata();
    malformed.put(TRACEPARENT, "00-" + CLIENT_TRACE + "-zz-01");
    config(malformed);
    flush(2);

    assertEquals(2, exported.size());
    for (SpanData span : exported) {
      assertNotEquals(CLIENT_TRACE, span.getTraceId());
      assertTrue(!span.getParentSpanContext().isValid(), span.toString());
    }
  }

  /** The traceparent's sampled flag (the lowest bit; the SDK also sets "random trace id", 02). */
  private static boolean sampled(String traceparent) {
    return (Integer.parseInt(traceparent.substring(traceparent.length() - 2), 16) & 1) == 1;
  }

  /** Keeps what is exported. */
  private final class Collecting implements SpanExporter {
    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
      exported.addAll(spans);
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }
}
