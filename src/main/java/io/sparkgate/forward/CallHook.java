package io.sparkgate.forward;

import io.grpc.Attributes;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;

/**
 * One proxied call's view of its messages: it may change a message or refuse the call. Request messages
 * arrive one at a time in order, as do responses; the two directions may run on different threads.
 */
public interface CallHook {
  /** A hook that forwards everything as received. */
  CallHook PASS_THROUGH = new CallHook() {};

  /**
   * Returns the bytes to forward for one client message, or throws to refuse the whole call; the status
   * (and its trailers, such as rich error details) goes to the client and the backend call is cancelled.
   */
  default byte[] onRequest(byte[] message) throws StatusException {
    return message;
  }

  /**
   * Every hook of the call let this message through ({@link #onRequest} of each returned), and {@code
   * forwarded} is what goes to the backend: for state that must only learn from requests that are forwarded.
   */
  default void onAccepted(byte[] forwarded) {}

  /**
   * The client has sent its last message; throw to refuse the call before the backend sees the end of the
   * stream (e.g. a check that needs the whole stream).
   */
  default void onHalfClose() throws StatusException {}

  /**
   * Returns what to send the client for one backend message. A hook that replaces the message need not
   * release the one it was given: the caller releases both.
   */
  default Payload onResponse(Payload message) {
    return message;
  }

  /**
   * The call is ending with this status and the client has not been told yet: for state that must be current
   * before the client can act on the answer (its next call may arrive as soon as it sees the status). Called
   * at most once, on the thread that closes the call (an event loop): keep it short. The one wait allowed is a
   * bounded round trip to a store other replicas share, for the rare answer that changes what they must read.
   */
  default void onClosing(Status status) {}

  /** The call has ended with this status, seen by the client. */
  default void onClose(Status status) {}

  /**
   * The backend ({@code host:port}) the call goes to, asked once the first request message has passed every
   * hook; null: the proxy's first backend.
   */
  default String backend() {
    return null;
  }

  /**
   * Adds to (or replaces in) the headers the backend call starts with, once, just before it starts: the
   * trace context of the next hop, say. {@code headers} are the client's headers that passed {@code
   * listen.forward_headers}, and the proxy's own.
   */
  default void toBackend(Metadata headers) {}

  /**
   * Whether handling this request message may wait (on a shared store, say): it is then handled on the
   * worker pool rather than the event loop that read it.
   */
  default boolean mayBlock(byte[] message) {
    return false;
  }

  /** Creates the hook of each new call; may refuse the call before any message by throwing. */
  @FunctionalInterface
  interface Factory {
    Factory PASS_THROUGH = (method, headers, transport) -> CallHook.PASS_THROUGH;

    /** The hook of a call to {@code method}; {@code transport} describes the client's connection. */
    CallHook newCall(MethodDescriptor<?, ?> method, Metadata headers, Attributes transport)
        throws StatusException;
  }
}
