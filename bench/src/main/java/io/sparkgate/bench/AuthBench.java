package io.sparkgate.bench;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.StatusException;
import io.sparkgate.auth.Authentication;
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
 * Authentication per call through the public surface: the interceptor verifying an RS256 JWT from the
 * {@code authorization} header with the token cache on (the steady state: a client reuses its token) and off
 * (every call verifies the signature), and the UserContext rewrite (identity hooks) of one ExecutePlan.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class AuthBench {
  private Authentication cached;
  private Authentication uncached;
  private Metadata headers;
  private Context authenticated;
  private byte[] request;
  private final SecurityFixtures.FakeCall call = new SecurityFixtures.FakeCall();
  private final ServerCall.Listener<byte[]> listener = new ServerCall.Listener<>() {};
  private final ServerCallHandler<byte[], byte[]> next = (c, h) -> listener;

  @Setup
  public void setup() throws Exception {
    SecurityFixtures.Jwt on = SecurityFixtures.jwt(10_000, null);
    SecurityFixtures.Jwt off = SecurityFixtures.jwt(0, null);
    cached = Authentication.create(on.config().auth());
    uncached = Authentication.create(off.config().auth());
    headers = SecurityFixtures.bearer(on.token());
    authenticated = SecurityFixtures.authenticatedContext(cached, on.token());
    // The uncached instance has its own key: verify its own token.
    uncachedHeaders = SecurityFixtures.bearer(off.token());
    SecurityFixtures.authenticatedContext(uncached, off.token());
    request = BenchProtocol.executePlanRequest("00000000-0000-0000-0000-00000000beef", 16, 1);
  }

  private Metadata uncachedHeaders;

  @Benchmark
  public ServerCall.Listener<byte[]> tokenVerifyCached() {
    ServerCall.Listener<byte[]> l = cached.interceptor().interceptCall(call, headers, next);
    if (call.closed != null) {
      throw new IllegalStateException("refused: " + call.closed);
    }
    return l;
  }

  @Benchmark
  public ServerCall.Listener<byte[]> tokenVerifyUncached() {
    ServerCall.Listener<byte[]> l = uncached.interceptor().interceptCall(call, uncachedHeaders, next);
    if (call.closed != null) {
      throw new IllegalStateException("refused: " + call.closed);
    }
    return l;
  }

  /** Identity hooks (UserContext overwrite, secret redaction) for one ExecutePlan of an authenticated call. */
  @Benchmark
  public byte[] userContextRewrite() throws Exception {
    Context previous = authenticated.attach();
    try {
      return cached.hooks().newCall(SecurityFixtures.EXECUTE_PLAN, headers).onRequest(request);
    } finally {
      authenticated.detach(previous);
    }
  }
}
