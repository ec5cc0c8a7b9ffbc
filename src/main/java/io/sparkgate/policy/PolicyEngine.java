package io.sparkgate.policy;

import io.grpc.Status;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Facts in, decision out: enriches the facts with the backend profile and the secret settings, and evaluates
 * the policy in force. Fail closed: any exception is a refusal, never an allow. One refusal holds whatever the
 * policy says: reading the backend's own token ({@code spark.connect.authenticate.token}), which would let a
 * user past the proxy altogether.
 */
public final class PolicyEngine {
  private static final Logger log = LoggerFactory.getLogger(PolicyEngine.class);

  /** The rule name the backend-token refusal is recorded and counted under. */
  static final String BACKEND_TOKEN_RULE = "backend-token";

  private final Supplier<Policy> policy;
  private final ProfileSource profiles;
  private final SecretPatterns secrets;

  /** With the default secret patterns ({@code auth.secret_patterns} unset). */
  public PolicyEngine(Supplier<Policy> policy, ProfileSource profiles) {
    this(policy, profiles, new SecretPatterns(AuthConfig.disabled().secretPatterns()));
  }

  /** @param secrets the settings whose CONFIG_READ facts get {@code secret=true} */
  public PolicyEngine(Supplier<Policy> policy, ProfileSource profiles, SecretPatterns secrets) {
    this.policy = policy;
    this.profiles = profiles;
    this.secrets = secrets;
  }

  /** The settings whose values are secrets (never recorded). */
  SecretPatterns secrets() {
    return secrets;
  }

  public BackendProfile profile() {
    return profiles.current();
  }

  /** Facts as rules see them (with {@code catalog_impl}, and {@code secret} on CONFIG_READ). */
  public Facts enrich(Facts facts) {
    return Enrichment.enrich(facts, profiles.current(), secrets);
  }

  /** Decides on already enriched facts. */
  public Decision decide(
      String rpc, String principal, List<String> groups, String tenant, Facts enriched) {
    try {
      // Ignoring case, although Spark reads only the exact key: refusing a key that cannot be the
      // token costs nothing, and this refusal must hold whatever else is true.
      if (enriched.any(
          Fact.Kind.CONFIG_READ, f -> AuthConfig.SPARK_TOKEN_KEY.equalsIgnoreCase(f.get("key")))) {
        return Decision.refusal(
            BACKEND_TOKEN_RULE,
            "Reading "
                + AuthConfig.SPARK_TOKEN_KEY
                + " is not allowed through Sparkgate: it is the server's own credential.",
            Status.Code.PERMISSION_DENIED,
            List.of(),
            List.of());
      }
      return policy
          .get()
          .evaluate(new EvalInput(rpc, principal, groups, tenant, enriched, profiles.current()));
    } catch (RuntimeException | StackOverflowError e) {
      log.error("{}: policy evaluation failed; refusing", rpc, e);
      return internalError();
    }
  }

  static Decision internalError() {
    return Decision.refusal(
        "internal-error",
        "Sparkgate could not check this request against its policy.",
        Status.Code.PERMISSION_DENIED,
        List.of(),
        List.of());
  }
}
