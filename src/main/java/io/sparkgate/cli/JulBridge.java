package io.sparkgate.cli;

import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * gRPC logs through {@code java.util.logging}. Left alone, its warnings (a client that went away mid-stream,
 * a transport error) reached stderr in JUL's own two-line format, beside Sparkgate's lines and outside
 * whatever the operator configured for Logback. They go through SLF4J instead, so one configuration governs
 * every line; {@code logback.xml}'s {@code LevelChangePropagator} copies Logback's levels back to JUL, so a
 * disabled gRPC debug line costs its level check and nothing more.
 */
final class JulBridge {
  private JulBridge() {}

  static void install() {
    if (!SLF4JBridgeHandler.isInstalled()) {
      SLF4JBridgeHandler.removeHandlersForRootLogger();
      SLF4JBridgeHandler.install();
    }
  }
}
