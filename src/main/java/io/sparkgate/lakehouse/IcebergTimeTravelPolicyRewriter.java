package io.sparkgate.lakehouse;

import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.RequestRewriter;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.InspectorConfig;
import io.sparkgate.inspect.SessionView;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The policy effect {@code rewrite} with {@code rewriter: iceberg_time_travel}: Iceberg SQL time travel on a
 * mixed Hudi + Iceberg server becomes a read of the {@code snapshot_id_<id>} / {@code at_timestamp_<millis>}
 * table, and what cannot be rewritten safely is refused (FAILED_PRECONDITION, with the working alternative).
 */
public final class IcebergTimeTravelPolicyRewriter implements RequestRewriter {
  /** The name policies use: {@code rewriter: iceberg_time_travel}. */
  public static final String NAME = "iceberg_time_travel";

  private final TimeTravelRequestRewriter rewriter =
      new TimeTravelRequestRewriter(InspectorConfig.DEFAULTS.maxDepth());

  /** The rewriters this package offers policies, by the name a rule's {@code rewriter:} uses. */
  public static Map<String, RequestRewriter> all() {
    return Map.of(NAME, new IcebergTimeTravelPolicyRewriter());
  }

  @Override
  public Result rewrite(
      String method, byte[] request, Facts facts, BackendProfile profile, SessionView session)
      throws StatusException {
    try {
      TimeTravelRequestRewriter.Rewritten out =
          rewriter.rewrite(request, method, facts, session, profile);
      return new Result(out.request(), describe(out.rewrites()));
    } catch (RefusedException e) {
      throw Status.FAILED_PRECONDITION.withDescription(e.getMessage()).asException();
    }
  }

  private static String describe(List<Rewrite> rewrites) {
    if (rewrites.isEmpty()) {
      return "nothing to rewrite";
    }
    return rewrites.stream()
        .map(r -> r.table() + ": '" + r.from() + "' -> '" + r.to() + "'")
        .collect(Collectors.joining("; "));
  }
}
