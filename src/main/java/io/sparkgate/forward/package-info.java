/**
 * The forwarding layer: joins each client call of an allowed Spark Connect method to a backend call, one
 * message at a time in each direction under HTTP/2 flow control, and passes bytes and headers through as
 * received except where a {@link io.sparkgate.forward.CallHook} changes or refuses them (credentials stop at
 * the proxy); it knows no stage, only that interface, and imports no Sparkgate package but the generated protos
 * and the configuration records.
 *
 * <p>It owns the gRPC transport, and with {@code io.sparkgate.tls} is the only package built on the Netty that
 * grpc-netty-shaded bundles: what other packages need from the connections (limits counting them and the frames
 * that refuse them, the metrics reading the transport's memory) they get through neutral types here, {@link
 * io.sparkgate.forward.ConnectionWatch} and {@link io.sparkgate.forward.Acceptor}.
 */
package io.sparkgate.forward;
