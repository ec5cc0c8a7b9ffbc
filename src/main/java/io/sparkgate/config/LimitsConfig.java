package io.sparkgate.config;

import io.sparkgate.yaml.Units;
import io.sparkgate.yaml.YamlNode;
import java.time.Duration;

/**
 * What the proxy lets clients hold at once ({@code limits:}), so that no client, and no crowd of them, can
 * exhaust its connections, threads or memory. Past a connection limit a new connection is closed as soon as
 * it is accepted; past a call limit a new call is refused at once with RESOURCE_EXHAUSTED and a retry delay.
 * (Streams per connection and the handshake timeout are {@code listen.max_concurrent_streams} and {@code
 * listen.handshake_timeout}.)
 *
 * @param maxConnections client connections open at once, all addresses together
 * @param maxConnectionsPerAddress client connections open at once from one IP address
 * @param maxCalls calls in progress at once, all connections together
 * @param maxBufferedBytes message bytes the proxy may hold between client and backend before it refuses new
 *     calls
 * @param maxHeaderBytes the largest request header block (HTTP/2 header list size), tokens included
 * @param maxStreamResets streams a client may reset within {@code streamResetWindow} before its connection is
 *     closed (HTTP/2 rapid reset, CVE-2023-44487)
 * @param streamResetWindow the window of {@code maxStreamResets}, whole seconds
 */
public record LimitsConfig(
    int maxConnections,
    int maxConnectionsPerAddress,
    int maxCalls,
    long maxBufferedBytes,
    int maxHeaderBytes,
    int maxStreamResets,
    Duration streamResetWindow) {

  public LimitsConfig {
    if (maxConnectionsPerAddress > maxConnections) {
      throw new IllegalArgumentException(
          "max_connections_per_address ("
              + maxConnectionsPerAddress
              + ") must not be more than max_connections ("
              + maxConnections
              + ")");
    }
    if (streamResetWindow.toMillis() % 1000 != 0 || streamResetWindow.isZero()) {
      throw new IllegalArgumentException(
          "stream_reset_window must be a whole number of seconds, got "
              + Units.human(streamResetWindow));
    }
  }

  /** The limits without a {@code limits} section: generous for real clients, finite for every attacker. */
  public static LimitsConfig defaults() {
    return new LimitsConfig(
        10_000, 256, 4096, 512L * 1024 * 1024, 16 * 1024, 200, Duration.ofSeconds(10));
  }

  static LimitsConfig read(YamlNode node) {
    node.allowOnly(
        "max_connections",
        "max_connections_per_address",
        "max_calls",
        "max_buffered_bytes",
        "max_header_bytes",
        "max_stream_resets",
        "stream_reset_window");
    LimitsConfig d = defaults();
    int maxConnections = node.integer("max_connections", d.maxConnections(), 1, 1_000_000);
    int perAddress =
        node.integer(
            "max_connections_per_address",
            Math.min(d.maxConnectionsPerAddress(), maxConnections),
            1,
            1_000_000);
    if (perAddress > maxConnections) {
      throw node.errorAt(
          "max_connections_per_address",
          "is "
              + perAddress
              + ", more than max_connections ("
              + maxConnections
              + "): lower it, or raise max_connections");
    }
    Duration window =
        node.duration(
            "stream_reset_window",
            d.streamResetWindow(),
            Duration.ofSeconds(1),
            Duration.ofHours(1));
    if (window.toMillis() % 1000 != 0) {
      throw node.errorAt(
          "stream_reset_window", "is " + Units.human(window) + ": give whole seconds (10s)");
    }
    return new LimitsConfig(
        maxConnections,
        perAddress,
        node.integer("max_calls", d.maxCalls(), 1, 10_000_000),
        node.bytes("max_buffered_bytes", d.maxBufferedBytes(), 1024 * 1024, Long.MAX_VALUE),
        // Below 1 KiB not even gRPC's own headers fit; HTTP/2 settings carry an unsigned 31-bit
        // int.
        (int) node.bytes("max_header_bytes", d.maxHeaderBytes(), 1024, 1024 * 1024),
        node.integer("max_stream_resets", d.maxStreamResets(), 1, 1_000_000),
        window);
  }
}
