package io.sparkgate.bench;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.sparkgate.Sparkgate;
import io.sparkgate.auth.Authentication;
import io.sparkgate.call.Pipeline;
import io.sparkgate.lakehouse.IcebergTimeTravelPolicyRewriter;
import io.sparkgate.policy.PolicyStage;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The whole per-request work of Sparkgate full for one small ExecutePlan, as the proxy runs it: its stages
 * (Sparkgate.stages without audit, which AuditBench measures) opened on a new call (the authenticate stage
 * verifying a cached JWT), then the request message through them (identity stamping, inspection, the shipped
 * shared-server policy, the route).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class HookChainBench {
  private PolicyStage policy;
  private ManagedChannel backend;
  private Pipeline stages;
  private Metadata headers;
  private byte[] request;

  @Setup
  public void setup() throws Exception {
    SecurityFixtures.Jwt jwt =
        SecurityFixtures.jwt(
            10_000, Endpoints.repoRoot().resolve("policies").resolve("shared-server.yaml"));
    Authentication auth = Authentication.create(jwt.config().auth());
    // Nothing listens there: the backend profile stays unknown, as for a backend that is not Spark.
    backend =
        ManagedChannelBuilder.forTarget(jwt.config().firstBackend().address())
            .usePlaintext()
            .build();
    policy = PolicyStage.start(jwt.config(), backend, IcebergTimeTravelPolicyRewriter.all());
    stages = Pipeline.of(Sparkgate.stages(jwt.config(), auth, null, policy));
    headers = SecurityFixtures.bearer(jwt.token());
    request = BenchProtocol.executePlanRequest("00000000-0000-0000-0000-00000000beef", 16, 1);
    oneCall();
  }

  @TearDown
  public void tearDown() {
    policy.close();
    backend.shutdownNow();
  }

  @Benchmark
  public byte[] oneCall() throws Exception {
    return stages.open(SecurityFixtures.call(headers)).onRequest(request);
  }
}
