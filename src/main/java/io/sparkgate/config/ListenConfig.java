package io.sparkgate.config;

import io.sparkgate.yaml.Units;
import io.sparkgate.yaml.YamlNode;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Where clients connect and the limits that protect the proxy from them.
 *
 * @param plaintext a plaintext listener, only when explicitly asked for (development, or behind a mesh); a
 *     file may ask for it on a non-loopback address only with {@code plaintext_beyond_loopback: true}
 * @param maxInboundMessageBytes the largest request or response message, Spark's default 128 MiB
 * @param maxConcurrentStreams streams one client connection may hold open at once
 * @param handshakeTimeout how long a connection may take to complete TLS and HTTP/2 set-up
 * @param keepaliveTime idle time after which the proxy pings a client to find dead connections
 * @param shutdownGrace how long a stopping proxy lets running calls finish
 * @param drainDelay how long a proxy told to stop (SIGTERM) keeps accepting new calls while reporting itself
 *     not ready, so that load balancers take it out of rotation before it refuses anyone
 * @param eventLoops network threads; each holds its own backend connection, and a call stays on the one that
 *     accepted its client connection
 * @param forwardHeaders the client request headers that reach the backend, besides those the proxy sets
 *     ({@code x-forwarded-for}, the backend's own token); none by default
 * @param eventLoopSpin how long an event loop with nothing to do polls for more before it sleeps; zero, the
 *     default, sleeps at once. It trades CPU for latency (docs/performance.md, "Spinning event loops")
 */
public record ListenConfig(
    String address,
    int port,
    boolean plaintext,
    long maxInboundMessageBytes,
    int maxConcurrentStreams,
    Duration handshakeTimeout,
    Duration keepaliveTime,
    Duration shutdownGrace,
    int eventLoops,
    Duration eventLoopSpin,
    Duration drainDelay,
    List<String> forwardHeaders) {

  public static final long DEFAULT_MAX_INBOUND_MESSAGE_BYTES = 128L * 1024 * 1024;

  /** Beyond this, spinning is no longer a wait for the next message of a call but a core kept busy. */
  public static final Duration MAX_EVENT_LOOP_SPIN = Duration.ofMillis(1);

  public ListenConfig {
    forwardHeaders = List.copyOf(forwardHeaders);
    if (eventLoopSpin.isNegative() || eventLoopSpin.compareTo(MAX_EVENT_LOOP_SPIN) > 0) {
      throw new IllegalArgumentException(
          "event loop spin must be between 0s and "
              + Units.human(MAX_EVENT_LOOP_SPIN)
              + ", got "
              + Units.human(eventLoopSpin));
    }
  }

  /** One loop per core, like nginx's {@code worker_processes auto}: more only adds context switches. */
  public static int defaultEventLoops() {
    return Runtime.getRuntime().availableProcessors();
  }

  /** Whether the listener is reachable only from this machine, so plaintext never leaves it. */
  public boolean loopbackOnly() {
    return loopback(address);
  }

  /**
   * Literal loopback addresses and {@code localhost} only: any other host name could resolve beyond this
   * machine, now or after a DNS change, so it counts as not loopback.
   */
  static boolean loopback(String address) {
    String a =
        address.startsWith("[") && address.endsWith("]")
            ? address.substring(1, address.length() - 1)
            : address;
    if (a.equalsIgnoreCase("localhost")) return true;
    if (!a.matches("[0-9.]+") && !a.contains(":")) return false; // a host name: never resolved here
    try {
      return InetAddress.getByName(a).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  static ListenConfig read(YamlNode node) {
    node.allowOnly(
        "address",
        "port",
        "plaintext",
        "max_inbound_message_size",
        "max_concurrent_streams",
        "handshake_timeout",
        "keepalive_time",
        "shutdown_grace",
        "drain_delay",
        "event_loops",
        "event_loop_spin",
        "plaintext_beyond_loopback",
        "forward_headers");
    boolean plaintext = node.bool("plaintext", false);
    boolean acknowledged = node.bool("plaintext_beyond_loopback", false);
    String address = node.string("address", "0.0.0.0");
    if (plaintext && !loopback(address) && !acknowledged) {
      // Tokens and data would cross a network in the clear: only an operator who knows a mesh or a
      // private link carries the traffic may say so.
      throw node.errorAt(
          "plaintext",
          "is true on "
              + address
              + ", which is not a loopback address: clients' tokens and data would cross the network"
              + " unencrypted. Configure tls instead, bind address: 127.0.0.1, or (behind a mesh that"
              + " encrypts) set listen.plaintext_beyond_loopback: true");
    }
    if (acknowledged && !plaintext) {
      throw node.errorAt(
          "plaintext_beyond_loopback", "is set but listen.plaintext is not: remove it");
    }
    return new ListenConfig(
        address,
        node.integer("port", 15003, 0, 65535),
        plaintext,
        node.bytes(
            "max_inbound_message_size", DEFAULT_MAX_INBOUND_MESSAGE_BYTES, 1024, Integer.MAX_VALUE),
        node.integer("max_concurrent_streams", 1000, 1, 1_000_000),
        node.duration(
            "handshake_timeout",
            Duration.ofSeconds(10),
            Duration.ofMillis(100),
            Duration.ofMinutes(5)),
        node.duration(
            "keepalive_time", Duration.ofMinutes(1), Duration.ofSeconds(10), Duration.ofDays(1)),
        node.duration("shutdown_grace", Duration.ofSeconds(30), Duration.ZERO, Duration.ofHours(1)),
        node.integer("event_loops", defaultEventLoops(), 1, 1024),
        node.duration("event_loop_spin", Duration.ZERO, Duration.ZERO, MAX_EVENT_LOOP_SPIN),
        node.duration("drain_delay", Duration.ofSeconds(5), Duration.ZERO, Duration.ofMinutes(10)),
        forwardHeaders(node));
  }

  /** Names a client must never assert to the backend: credentials, where it connects from, who it is. */
  private static final Pattern NEVER_FORWARDED =
      Pattern.compile(
          "authorization|authentication|proxy-authorization|cookie|forwarded|x-forwarded-.*|x-real-ip"
              + "|x-client-ip|true-client-ip|via|host|te|connection|keep-alive|upgrade"
              + "|transfer-encoding|content-type|content-length|user-agent|grpc-(?!.*-bin$).*"
              + "|.*(user|principal|identity|impersonat|auth).*");

  /** An HTTP/2 header name: lower-case token characters; {@code :pseudo} headers are not headers. */
  private static final Pattern HEADER_NAME = Pattern.compile("[a-z0-9!#$%&'*+.^_`|~-]+");

  private static List<String> forwardHeaders(YamlNode node) {
    List<String> names = node.stringList("forward_headers");
    Set<String> seen = new LinkedHashSet<>();
    for (String name : names) {
      if (!HEADER_NAME.matcher(name).matches()) {
        throw node.errorAt(
            "forward_headers",
            "'"
                + name
                + "' is not a header name (lower case letters, digits and -, as HTTP/2 sends it)");
      }
      if (NEVER_FORWARDED.matcher(name).matches()) {
        throw node.errorAt(
            "forward_headers",
            "'"
                + name
                + "' can never be forwarded: a client must not assert credentials, its address or an"
                + " identity to the backend (the proxy sets x-forwarded-for itself)");
      }
      if (!seen.add(name)) {
        throw node.errorAt("forward_headers", "lists '" + name + "' twice");
      }
    }
    return List.copyOf(seen);
  }
}
