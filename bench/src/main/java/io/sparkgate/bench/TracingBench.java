package io.sparkgate.bench;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.sparkgate.Sparkgate;
import io.sparkgate.auth.Authentication;
import io.sparkgate.call.Pipeline;
import io.sparkgate.call.Stage;
import io.sparkgate.config.TracingConfig;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.lakehouse.IcebergTimeTravelPolicyRewriter;
import io.sparkgate.policy.PolicyStage;
import io.sparkgate.tracing.Tracing;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What tracing adds to a call: one small ExecutePlan's whole life through Sparkgate full's stages (as
 * HookChainBench, plus the backend's headers, one response and the close), without a tracing section
 * ({@code off}), and with one sampling 1% and 100% of new traces. Spans go through the real batch span
 * processor to an exporter that drops them: OTLP encoding and the network happen on the processor's own
 * thread, not on a call's, so they are not in these figures (a sampled span is handed to the queue, or
 * dropped when the queue is full).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class TracingBench {
  @Param({"off", "0.01", "1.0"})
  public String sampler;

  private PolicyStage policy;
  private ManagedChannel backend;
  private Tracing tracing;
  private Pipeline stages;
  private Pipeline alone;
  private Metadata headers;
  private byte[] request;
  private byte[] response;

  @Setup
  public void setup() throws Exception {
    SecurityFixtures.Jwt jwt =
        SecurityFixtures.jwt(
            10_000, Endpoints.repoRoot().resolve("policies").resolve("shared-server.yaml"));
    Authentication auth = Authentication.create(jwt.config().auth());
    backend =
        ManagedChannelBuilder.forTarget(jwt.config().firstBackend().address())
            .usePlaintext()
            .build();
    policy = PolicyStage.start(jwt.config(), backend, IcebergTimeTravelPolicyRewriter.all());
    List<Stage> all = new ArrayList<>();
    if (!sampler.equals("off")) {
      tracing =
          Tracing.start(
              new TracingConfig(
                  URI.create("http://127.0.0.1:4317"),
                  TracingConfig.Protocol.GRPC,
                  Double.parseDouble(sampler),
                  Map.of(),
                  "sparkgate-bench"),
              new Dropping());
      all.add(tracing.stage());
    }
    all.addAll(Sparkgate.stages(jwt.config(), auth, null, policy));
    stages = Pipeline.of(all);
    alone = Pipeline.of(all.subList(0, tracing == null ? 0 : 1));
    headers = SecurityFixtures.bearer(jwt.token());
    request = BenchProtocol.executePlanRequest("00000000-0000-0000-0000-00000000beef", 16, 1);
    response = new byte[64];
    oneCall();
  }

  @TearDown
  public void tearDown() {
    if (tracing != null) tracing.close();
    policy.close();
    backend.shutdownNow();
  }

  @Benchmark
  public Metadata oneCall() throws Exception {
    return call(stages);
  }

  /** The tracing stage alone (nothing at all when off): what it adds, without the other stages' noise. */
  @Benchmark
  public Metadata stageAlone() throws Exception {
    return call(alone);
  }

  private Metadata call(Pipeline pipeline) throws Exception {
    CallHook hook = pipeline.open(SecurityFixtures.call(headers));
    byte[] forwarded = hook.onRequest(request);
    hook.onAccepted(forwarded);
    Metadata toBackend = new Metadata();
    hook.toBackend(toBackend);
    hook.onResponse(Payload.of(response)).release();
    hook.onClose(Status.OK);
    return toBackend;
  }

  /** Takes every batch and drops it. */
  private static final class Dropping implements SpanExporter {
    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
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
