package io.sparkgate.call;

import io.grpc.StatusException;
import io.sparkgate.forward.CallHook;

/**
 * One step a call passes through (authenticate, inspect, decide, route; audit around them all). The
 * {@link Pipeline} opens every stage for each new call, in order; a stage reads and writes the shared
 * {@link Call} and returns its part of the call as a {@link CallHook}: requests pass the hooks in stage order,
 * responses in reverse order.
 */
@FunctionalInterface
public interface Stage {
  /**
   * This stage's part of {@code call} ({@link CallHook#PASS_THROUGH} when it has nothing to do with it). Throw
   * to refuse the call before any message: the client gets the status, and the stages opened before this one
   * see {@link CallHook#onClose} with it.
   */
  CallHook open(Call call) throws StatusException;
}
