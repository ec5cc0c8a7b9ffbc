package io.sparkgate.policy;

import io.sparkgate.lakehouse.IcebergTimeTravelPolicyRewriter;
import java.util.Map;

/** The rewriters a policy's {@code rewriter:} can name. Add an entry here to make one available. */
public final class RequestRewriters {
  private RequestRewriters() {}

  /** Built-in rewriters by name (io.sparkgate.lakehouse registers {@code iceberg_time_travel} here). */
  public static Map<String, RequestRewriter> builtIn() {
    return Map.of(IcebergTimeTravelPolicyRewriter.NAME, new IcebergTimeTravelPolicyRewriter());
  }
}
