package io.sparkgate.route;

import io.grpc.StatusException;
import io.sparkgate.call.Principal;

/**
 * Pools whose backends Sparkgate starts when a principal first needs one (engines): which backend serves a
 * principal, and whether the one a session was placed on still runs. The router asks; the engines package
 * answers.
 */
public interface OnDemandBackends {
  /** None: every pool lists its backends. */
  OnDemandBackends NONE =
      new OnDemandBackends() {
        @Override
        public boolean serves(String pool) {
          return false;
        }

        @Override
        public boolean mayBlock(String pool, Principal principal) {
          return false;
        }

        @Override
        public String backendFor(String pool, Principal principal) {
          throw new IllegalStateException("pool " + pool + " has no engines");
        }

        @Override
        public boolean running(String pool, String address) {
          return false;
        }

        @Override
        public void used(String pool, String address, SessionKey newSession) {}

        @Override
        public void finished(String pool, String address) {}
      };

  /** Whether {@code pool}'s backends are started on demand. */
  boolean serves(String pool);

  /** Whether {@link #backendFor} may wait (the principal's engine is not known to serve here yet). */
  boolean mayBlock(String pool, Principal principal);

  /**
   * The {@code host:port} of the backend serving {@code principal} in {@code pool}, started (and waited for)
   * if need be.
   *
   * @throws StatusException in Spark's error form: UNAVAILABLE with RetryInfo while it is still starting after
   *     the wait, RESOURCE_EXHAUSTED when the pool is full, and why when it cannot be started
   */
  String backendFor(String pool, Principal principal) throws StatusException;

  /** Whether {@code address} is a backend of {@code pool} that runs now; a session placed on one that stopped is lost. */
  boolean running(String pool, String address);

  /**
   * A call was routed to {@code address} ({@code newSession} null), or placed a new session there; a routed
   * call is in flight until {@link #finished}: an engine with calls in flight is in use however long they run.
   */
  void used(String pool, String address, SessionKey newSession);

  /** A call {@link #used} announced has ended. */
  void finished(String pool, String address);
}
