package io.sparkgate.forward;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Message bytes the proxy holds between client and backend: a request message from its arrival until it is
 * handed to the backend's stream (inspection, and the wait for a worker thread, included), a response
 * message from its arrival until it is handed to the client's. Past that, HTTP/2 flow control bounds what
 * each stream may hold; this is what it does not bound.
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
