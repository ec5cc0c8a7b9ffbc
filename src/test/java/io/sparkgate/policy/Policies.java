package io.sparkgate.policy;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import java.io.StringReader;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Helpers for policy tests. */
final class Policies {
  private Policies() {}

  static Policy compile(String yaml) {
    return new PolicyCompiler(Effect.DENY, Set.of("test_rewriter"))
        .compile("test.yaml", new StringReader(yaml));
  }

  static String compileError(String yaml) {
    try {
      compile(yaml);
    } catch (PolicyException e) {
      return e.getMessage();
    }
    throw new AssertionError("expected the policy to be rejected");
  }

  static Fact fact(Fact.Kind kind, String subkind, String... kv) {
    Map<String, String> attrs = new java.util.LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) attrs.put(kv[i], kv[i + 1]);
    return new Fact(kind, subkind, attrs);
  }

  static Decision decide(Policy p, List<String> groups, BackendProfile profile, Fact... facts) {
    return p.evaluate(
        new EvalInput("ExecutePlan", "alice", groups, "", Facts.of(List.of(facts)), profile));
  }

  static Decision decide(Policy p, Fact... facts) {
    return decide(p, List.of(), BackendProfile.UNKNOWN, facts);
  }
}
