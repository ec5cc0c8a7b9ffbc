/**
 * The composition root: {@link io.sparkgate.Sparkgate} joins the stages, the forwarding layer, TLS and the
 * metrics into one running proxy, and is the one place that knows every package; only the command line uses it.
 */
package io.sparkgate;
