package io.sparkgate.bench;

import io.grpc.Metadata;
import io.grpc.StatusException;
import io.sparkgate.auth.Authentication;
import io.sparkgate.forward.CallHook;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Authentication per call through the public surface: the authenticate stage verifying an RS256 JWT from the
 * {@code authorization} header with the token cache on (the steady state: a client reuses its token) and off
 * (every call verifies the signature), and the UserContext rewrite (identity stamping) of one ExecutePlan.
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
  private Metadata uncachedHeaders;

  /** The authenticate stage's part of one authenticated call: what stamps each of its requests. */
  private CallHook stamping;

  private byte[] request;

  @Setup
  public void setup() throws Exception {
    SecurityFixtures.Jwt on = SecurityFixtures.jwt(10_000, null);
    SecurityFixtures.Jwt off = SecurityFixtures.jwt(0, null);
    cached = Authentication.create(on.config().auth());
    uncached = Authentication.create(off.config().auth());
    headers = SecurityFixtures.bearer(on.token());
    // The uncached instance has its own key: verify its own token.
    uncachedHeaders = SecurityFixtures.bearer(off.token());
    SecurityFixtures.authenticated(uncached, off.token());
    stamping = cached.stage().open(SecurityFixtures.authenticated(cached, on.token()));
    request = BenchProtocol.executePlanRequest("00000000-0000-0000-0000-00000000beef", 16, 1);
  }

  @Benchmark
  public CallHook tokenVerifyCached() throws StatusException {
    return cached.stage().open(SecurityFixtures.call(headers));
  }

  @Benchmark
  public CallHook tokenVerifyUncached() throws StatusException {
    return uncached.stage().open(SecurityFixtures.call(uncachedHeaders));
  }

  /** Identity stamping (the UserContext overwrite) of one ExecutePlan of an authenticated call. */
  @Benchmark
  public byte[] userContextRewrite() throws Exception {
    return stamping.onRequest(request);
  }
}
