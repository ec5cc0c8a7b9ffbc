package io.sparkgate.forward;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Message bytes the proxy holds between client and backend: a request message from its arrival until it is
 * handed to the backend's stream (inspection, and the wait for a worker thread, included), a response
 * message from its arrival until it is handed to the client's, and the client's queue of responses while it
 * is full (a client that does not read as fast as the backend sends). What a call holds otherwise is bounded
 * by HTTP/2 flow control and the queue's threshold.
 */
public final class BufferedBytes {
  private final AtomicLong bytes = new AtomicLong();

  /** Bytes held now. */
  public long now() {
    return bytes.get();
  }

  void hold(long n) {
    bytes.addAndGet(n);
  }

  void release(long n) {
    bytes.addAndGet(-n);
  }
}
