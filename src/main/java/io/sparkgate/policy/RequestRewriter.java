package io.sparkgate.policy;

import io.grpc.StatusException;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.SessionView;

/**
 * Rewrites a request that a {@code rewrite} rule matched (for example Iceberg SQL time travel into the
 * {@code .snapshot_id_<id>} table form). Registered by name in {@link RequestRewriters}; a rule names it with
 * {@code rewriter: <name>}. Must be thread-safe. Throw a StatusException (with a message saying what to do) to
 * refuse what cannot be rewritten safely; any other exception is a refusal too.
 */
public interface RequestRewriter {
  /** The rewritten request and a one-line description of the change for the audit record. */
  record Result(byte[] request, String description) {}

  Result rewrite(byte[] request, Facts facts, BackendProfile profile, SessionView session) throws StatusException;
}
