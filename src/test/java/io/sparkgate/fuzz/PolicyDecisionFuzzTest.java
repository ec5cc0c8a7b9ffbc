package io.sparkgate.fuzz;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.InspectStage;
import io.sparkgate.call.Pipeline;
import io.sparkgate.call.Principal;
import io.sparkgate.cli.CliPolicyCompiler;
import io.sparkgate.forward.CallHook;
import io.sparkgate.inspect.ArtifactTracker;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionTracker;
import io.sparkgate.lakehouse.IcebergTimeTravelPolicyRewriter;
import io.sparkgate.policy.DecideStage;
import io.sparkgate.policy.Policy;
import io.sparkgate.policy.PolicyEngine;
import io.sparkgate.policy.ProfileSource;
import io.sparkgate.testing.TestStages;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The policy stage end to end, as the proxy runs it (inspection, enrichment, the shipped policies, session
 * tracking, rewriters), on a short series of fuzzed requests from one user, with the backend profile and the
 * caller's groups chosen by the fuzzer and, sometimes, the policy failing mid-evaluation. Whatever goes
 * wrong is a refusal: nothing but a gRPC status escapes, and a request the inspector could not fully read,
 * or whose policy evaluation failed, is never let through.
 */
final class PolicyDecisionFuzzTest {
  /** Every shipped policy (their rules change; the property does not depend on them). */
  private static final List<Policy> POLICIES = shippedPolicies();

  private static final BackendProfile[] PROFILES = {
    null, // not known yet: rules that need it refuse
    new BackendProfile("4.0.0", List.of(), Map.of(), null),
    new BackendProfile(
        "3.5.7",
        List.of(
            "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"),
        Map.of(
            "spark_catalog",
            "org.apache.iceberg.spark.SparkSessionCatalog",
            "cat",
            "org.apache.iceberg.spark.SparkCatalog"),
        null),
  };
  private static final Principal[] PRINCIPALS = {
    null, // authentication off: the user id the client declares
    new Principal(
        "bob", List.of("analysts"), Optional.empty(), Principal.Method.JWT, Optional.empty()),
    new Principal(
        "root",
        List.of("sparkgate-admins"),
        Optional.of("t1"),
        Principal.Method.JWT,
        Optional.empty()),
  };

  /** Independent of the hook's own: facts are compared with what the hook must have seen. */
  private static final Inspector INSPECTOR = new Inspector();

  @FuzzTest
  void policyStage_fuzzedRequests_neverAllowWhatFailedOrWasNotUnderstood(FuzzedDataProvider data) {
    Policy policy = POLICIES.get(data.consumeInt(0, POLICIES.size() - 1));
    BackendProfile profile = PROFILES[data.consumeInt(0, PROFILES.length - 1)];
    Principal principal = PRINCIPALS[data.consumeInt(0, PRINCIPALS.length - 1)];
    int fault = data.consumeInt(0, 7); // 1: the policy throws, 2: it overflows the stack; else none
    Supplier<Policy> current =
        () -> {
          if (fault == 1) throw new IllegalStateException("fuzz: policy evaluation failed");
          if (fault == 2) throw new StackOverflowError("fuzz: policy evaluation overflowed");
          return policy;
        };
    SessionTracker sessions =
        new SessionTracker(
            () -> profile == null ? BackendProfile.UNKNOWN : profile,
            Duration.ofHours(2),
            Ticker.systemTicker(),
            null);
    Pipeline stages =
        Pipeline.of(
            // Unstamped: the requests are inspected here as the client wrote them.
            TestStages.unstampedHead(),
            InspectStage.full(new Inspector(), sessions),
            new DecideStage(
                new PolicyEngine(current, ProfileSource.fixed(profile)),
                IcebergTimeTravelPolicyRewriter.all(),
                data.consumeBoolean()));
    for (int n = data.consumeInt(1, 3); n > 0 && data.remainingBytes() > 0; n--) {
      FuzzRequests.Request request = FuzzRequests.build(data);
      // Read in the session the stages will see (the backend's extensions decide which grammars
      // read SQL).
      boolean mustRefuse =
          fault == 1
              || fault == 2
              || INSPECTOR
                  .inspect(request.method(), request.bytes(), sessions, null)
                  .has(Fact.Kind.UNCLASSIFIED);
      Call call = Call.of(request.method());
      if (principal != null) call.principal(principal);
      Exception thrown = null;
      try {
        CallHook hook = stages.open(call);
        hook.onAccepted(hook.onRequest(request.bytes()));
        if (request.method().equals("AddArtifacts")) hook.onHalfClose();
      } catch (Exception e) {
        thrown = e;
      }
      Exception refused = thrown;
      if (refused != null && !(refused instanceof StatusException)) {
        fail("the policy stage threw " + refused + " for " + request, refused);
      }
      if (mustRefuse) {
        assertInstanceOf(
            StatusException.class, refused, () -> request + " was let through: " + call.decided());
      } else if (request.method().equals("AddArtifacts") && refused == null) {
        // An artifact begun and never finished is only known at the end of the stream; it must be
        // refused there.
        ArtifactTracker tracker = INSPECTOR.newArtifactTracker();
        INSPECTOR.inspect(request.method(), request.bytes(), sessions, tracker);
        assertFalse(
            INSPECTOR.finishArtifacts(tracker).has(Fact.Kind.UNCLASSIFIED),
            () -> request + " left an unfinished artifact and was let through: " + call.decided());
      }
    }
  }

  private static List<Policy> shippedPolicies() {
    try (Stream<Path> files = Files.list(Path.of("policies"))) {
      return files
          .filter(p -> p.toString().endsWith(".yaml") && !p.toString().endsWith("_test.yaml"))
          .sorted()
          .map(CliPolicyCompiler.get()::compile)
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
