/**
 * Server-side TLS from PEM files: the proxy's identity and, for mutual TLS, the client CA, re-read while
 * running so that rotated certificates reach new connections without a restart, with errors that name the
 * config key and path but never a file's contents (plus throwaway development certificates, and the client side
 * {@code sparkgate admin} needs to reach the admin listener); it knows nothing
 * of calls and imports no other Sparkgate package. With {@code io.sparkgate.forward} it is the only package
 * built on grpc-netty-shaded's Netty, for the SslContext gRPC's server takes.
 */
package io.sparkgate.tls;
