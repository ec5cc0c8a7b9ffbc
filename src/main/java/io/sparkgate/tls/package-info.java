/**
 * TLS from PEM files, both ways: the listener's identity and, for mutual TLS, the client CA; and towards the
 * backends, the CA their certificates must chain to (checked by name too) and the client certificate the
 * proxy presents. Every file is re-read while running so that rotated certificates reach new connections
 * without a restart, with errors that name the config key and path but never a file's contents (plus
 * throwaway development certificates, and the client side {@code sparkgate admin} needs to reach the admin
 * listener); it knows nothing of calls and imports no other Sparkgate package. With
 * {@code io.sparkgate.forward} it is the only package built on grpc-netty-shaded's Netty, for the SslContexts
 * gRPC's server and channels take.
 */
package io.sparkgate.tls;
