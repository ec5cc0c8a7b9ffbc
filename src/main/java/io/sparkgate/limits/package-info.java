/**
 * What clients may hold at once: connections (in all and per address), calls and buffered bytes, and the
 * count of HTTP/2 abuse the proxy cut off. The HTTP/2 defences themselves are gRPC's and Netty's, set from
 * {@code limits}; this package refuses what they do not cover and counts what they did. It sees connections
 * only through {@link io.sparkgate.forward.ConnectionWatch}, never the transport's own types.
 */
package io.sparkgate.limits;
