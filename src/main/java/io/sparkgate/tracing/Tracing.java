package io.sparkgate.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.common.ComponentLoader;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.sdk.common.export.GrpcSenderProvider;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.sparkgate.call.Stage;
import io.sparkgate.config.TracingConfig;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's tracer: the SDK set up from {@code tracing:} (no agent, no autoconfiguration, no global
 * state), a batch span processor exporting over OTLP, and the stage that makes each call's span. Closing it
 * exports what is still queued.
 */
public final class Tracing implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Tracing.class);

  /** How long closing waits for the last spans to leave. */
  private static final Duration FLUSH = Duration.ofSeconds(10);

  private final SdkTracerProvider provider;
  private final TracingStage stage;

  private Tracing(SdkTracerProvider provider) {
    this.provider = provider;
    this.stage = new TracingStage(provider.get("io.sparkgate"));
  }

  /** A tracer exporting as {@code config} says. */
  public static Tracing start(TracingConfig config) {
    return start(config, exporter(config));
  }

  /** A tracer exporting to {@code exporter} (tests and benchmarks pass their own). */
  public static Tracing start(TracingConfig config, SpanExporter exporter) {
    Resource resource =
        Resource.getDefault()
            .merge(
                Resource.create(
                    Attributes.of(AttributeKey.stringKey("service.name"), config.serviceName())));
    SdkTracerProvider provider =
        SdkTracerProvider.builder()
            .setResource(resource)
            // A client's decision is followed either way; new traces are sampled by their id, so
            // every replica and Spark agree on the same ones.
            .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(config.sampler())))
            .addSpanProcessor(BatchSpanProcessor.builder(exporter).build())
            .build();
    log.info(
        "tracing: exporting spans to {} over {} (service {}, new traces sampled: {})",
        config.endpoint(),
        config.protocol().key(),
        config.serviceName(),
        config.sampler());
    return new Tracing(provider);
  }

  /** The stage that opens each call's span: first, so that its span covers every other stage. */
  public Stage stage() {
    return stage;
  }

  /**
   * {@code stage}, timed on each call whose span records: its span gets an event with the stage's time, under
   * {@code name}.
   */
  public Stage timed(String name, Stage stage) {
    return new TimedStage(name, stage);
  }

  /** Exports the spans still queued (within a few seconds), then stops exporting. */
  @Override
  public void close() {
    provider.shutdown().join(FLUSH.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static SpanExporter exporter(TracingConfig config) {
    Map<String, String> headers = new LinkedHashMap<>();
    config.headers().forEach((name, value) -> headers.put(name, value.reveal()));
    String endpoint = config.endpoint().toString();
    return switch (config.protocol()) {
      case GRPC ->
          OtlpGrpcSpanExporter.builder()
              .setEndpoint(endpoint)
              .setHeaders(() -> headers)
              .setComponentLoader(new GrpcJava())
              .build();
      case HTTP_PROTOBUF ->
          OtlpHttpSpanExporter.builder().setEndpoint(endpoint).setHeaders(() -> headers).build();
    };
  }

  /** Hands the gRPC exporter {@link GrpcJavaSender}; every other component is found as usual. */
  private static final class GrpcJava implements ComponentLoader {
    private final ComponentLoader classPath =
        ComponentLoader.forClassLoader(Tracing.class.getClassLoader());

    @Override
    @SuppressWarnings("unchecked")
    public <T> Iterable<T> load(Class<T> type) {
      if (type == GrpcSenderProvider.class) {
        GrpcSenderProvider provider = GrpcJavaSender::new;
        return (Iterable<T>) List.of(provider);
      }
      return classPath.load(type);
    }
  }
}
