/**
 * The forwarding layer: joins each client call of an allowed Spark Connect method to a backend call, one
 * message at a time in each direction under HTTP/2 flow control, and passes bytes and headers through as
 * received except where a {@link io.sparkgate.forward.CallHook} changes or refuses them (credentials stop at
 * the proxy); it knows no stage, only that interface, and imports no Sparkgate package but the generated protos.
 */
package io.sparkgate.forward;
