package io.sparkgate.forward;

import java.util.Map;

/**
 * Settings of the gRPC transport's Netty that the proxy runs with unless the operator sets them ({@code
 * -Dname=value} wins). They are system properties read once, when grpc-netty-shaded's Netty classes load, so
 * the command line sets them before anything else; their names carry the shaded package, hence they live here.
 */
public final class NettyDefaults {
  private static final String SHADED = "io.grpc.netty.shaded.";

  /**
   * <ul>
   *   <li>Leak detection off: in its default sampling mode it records a stack trace for one buffer in 128,
   *       which profiled at 4% of an event loop's time while streaming results. It is a debugging aid; a
   *       leak in production shows as growing direct memory.
   *   <li>Netty's own allocator (the adaptive one in Netty 4.2) instead of the pooled allocator gRPC builds
   *       with 2 MiB chunks: a result batch of a megabyte or more took a chunk to itself, freed it when sent and
   *       mapped and zeroed a fresh one for the next batch.
   * </ul>
   */
  static final Map<String, String> DEFAULTS =
      Map.of(
          SHADED + "io.netty.leakDetection.level", "disabled",
          SHADED + "io.grpc.netty.useCustomAllocator", "false");

  private NettyDefaults() {}

  /** Sets each default the operator left unset; call before anything touches gRPC. */
  public static void apply() {
    DEFAULTS.forEach(
        (name, value) -> {
          if (System.getProperty(name) == null) {
            System.setProperty(name, value);
          }
        });
  }
}
