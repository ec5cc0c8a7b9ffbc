package io.sparkgate.call;

import io.grpc.StatusException;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.SessionView;

/**
 * Rewrites a request that a {@code rewrite} rule matched (for example Iceberg SQL time travel into the
 * {@code .snapshot_id_<id>} table form). The proxy is assembled with rewriters by name; a rule names one with
 * {@code rewriter: <name>}. Must be thread-safe. Throw a StatusException (with a message saying what to do) to
 * refuse what cannot be rewritten safely; any other exception is a refusal too.
 */
public interface RequestRewriter {
  /** The rewritten request and a one-line description of the change for the audit record. */
  record Result(byte[] request, String description) {}

  /** {@code facts} are the inspect stage's facts of {@code request}, for the request's {@code method}. */
  Result rewrite(
      String method, byte[] request, Facts facts, BackendProfile profile, SessionView session)
      throws StatusException;
}
