package io.sparkgate.forward;

/** The forwarding path's fixed sizes, for tests in other packages that wait for a state they set. */
public final class ForwardingLimits {
  /**
   * Response bytes a client-facing call may queue before the proxy stops reading its backend; while the queue
   * is full, the call counts in {@code sparkgate_buffered_bytes} as this threshold plus the message that
   * filled it.
   */
  public static final int RESPONSE_QUEUE_BYTES = ForwardingCall.RESPONSE_QUEUE_BYTES;

  private ForwardingLimits() {}
}
