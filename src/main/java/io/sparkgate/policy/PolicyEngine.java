package io.sparkgate.policy;

import io.grpc.Status;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Facts;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Facts in, decision out: enriches the facts with the backend profile and evaluates the policy in force.
 * Fail closed: any exception is a refusal, never an allow.
 */
public final class PolicyEngine {
  private static final Logger log = LoggerFactory.getLogger(PolicyEngine.class);

  private final Supplier<Policy> policy;
  private final ProfileSource profiles;

  public PolicyEngine(Supplier<Policy> policy, ProfileSource profiles) {
    this.policy = policy;
    this.profiles = profiles;
  }

  public BackendProfile profile() {
    return profiles.current();
  }

  /** Facts as rules see them (with {@code catalog_impl}). */
  public Facts enrich(Facts facts) {
    return Enrichment.enrich(facts, profiles.current());
  }

  /** Decides on already enriched facts. */
  public Decision decide(String rpc, String principal, List<String> groups, String tenant, Facts enriched) {
    try {
      return policy.get().evaluate(new EvalInput(rpc, principal, groups, tenant, enriched, profiles.current()));
    } catch (RuntimeException | StackOverflowError e) {
      log.error("{}: policy evaluation failed; refusing", rpc, e);
      return internalError();
    }
  }

  static Decision internalError() {
    return Decision.refusal("internal-error", "Sparkgate could not check this request against its policy.",
        Status.Code.PERMISSION_DENIED, List.of(), List.of());
  }
}
