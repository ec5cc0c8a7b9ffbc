package io.sparkgate.forward;

import java.net.SocketAddress;

/**
 * What the client-facing listener tells about each client connection, in words that need no transport: limits
 * and meters implement it, and {@link Acceptor} feeds it from the listening socket and the HTTP/2 codec. Calls
 * come on the network threads (the accepting one for {@link #accepted}, then the connection's), so they must
 * be short and never block.
 */
@FunctionalInterface
public interface ConnectionWatch {
  /**
   * A connection from {@code remote} (null when the socket does not say) was accepted: returns what follows
   * its life, or null to close it at once, before TLS or gRPC spend anything on it.
   */
  Connection accepted(SocketAddress remote);

  /** One admitted connection's life. */
  interface Connection {
    /** Its TLS and HTTP/2 set-up completed: gRPC took it as a transport. */
    default void established() {}

    /** The proxy sent it RST_STREAM with this HTTP/2 error code (a stream refused or cut off). */
    default void streamReset(int errorCode) {}

    /** The proxy sent it GOAWAY with this HTTP/2 error code and the start of the frame's debug data. */
    default void goAway(int errorCode, String debug) {}

    /** It closed, established or not; called once. */
    void closed();
  }
}
