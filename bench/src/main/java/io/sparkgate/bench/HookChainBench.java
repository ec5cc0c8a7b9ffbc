package io.sparkgate.bench;

import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.sparkgate.auth.Authentication;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.CallHooks;
import io.sparkgate.policy.PolicyStage;
import java.nio.file.Path;
import java.util.List;
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
 * The whole per-request chain of Sparkgate full for one small ExecutePlan, as the proxy runs it: the auth
 * interceptor (cached JWT), then, in the authenticated context, the identity hooks and the policy hook
 * (inspection + the shipped shared-server policy) on the request message. Audit is measured by AuditBench.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class HookChainBench {
  private Authentication auth;
  private PolicyStage policy;
  private ManagedChannel backend;
  private CallHook.Factory hooks;
  private Metadata headers;
  private byte[] request;
  private byte[] forwarded;
  private final SecurityFixtures.FakeCall call = new SecurityFixtures.FakeCall();
  private final ServerCallHandler<byte[], byte[]> next = (c, h) -> {
    try {
      forwarded = hooks.newCall(SecurityFixtures.EXECUTE_PLAN, h).onRequest(request);
    } catch (Exception e) {
      throw new IllegalStateException("refused: " + e, e);
    }
    return new ServerCall.Listener<>() {};
  };

  @Setup
  public void setup() throws Exception {
    SecurityFixtures.Jwt jwt = SecurityFixtures.jwt(10_000, Endpoints.repoRoot().resolve("policies").resolve("shared-server.yaml"));
    auth = Authentication.create(jwt.config().auth());
    // Nothing listens there: the backend profile stays unknown, as for a backend that is not Spark.
    backend = ManagedChannelBuilder.forTarget(jwt.config().backend().address()).usePlaintext().build();
    policy = PolicyStage.start(jwt.config(), backend);
    hooks = CallHooks.chain(List.of(auth.hooks(), policy.hook()));
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
  public byte[] oneCall() {
    auth.interceptor().interceptCall(call, headers, next);
    if (call.closed != null) {
      throw new IllegalStateException("refused: " + call.closed);
    }
    return forwarded;
  }
}
