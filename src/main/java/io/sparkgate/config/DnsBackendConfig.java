package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * A pool's backends found through DNS ({@code - dns: name:port} or {@code - dns: name} in {@code backends}):
 * with a port, every A and AAAA record of {@code name} is a backend at that port (a Kubernetes headless
 * Service); without one, every SRV record of {@code name} names a backend, its target and port. The answer is
 * asked again every {@code refresh}, from {@code servers} or the system resolver.
 *
 * @param name the name asked, as written (a trailing dot kept)
 * @param port the backends' port; empty: SRV records give each its own
 * @param servers DNS servers asked in turn ({@code host:port}, IP literals); empty: the system resolver
 * @param backend the settings every backend found shares (token, profile, timeouts, tls); its host is
 *     {@code name}, the default TLS server name, and its port is {@code port} or 0
 */
public record DnsBackendConfig(
    String name, OptionalInt port, Duration refresh, List<Server> servers, BackendConfig backend) {

  public static final Duration DEFAULT_REFRESH = Duration.ofSeconds(10);

  /** A DNS server to ask: an IP address and port. */
  public record Server(String host, int port) {
    /** As JNDI's DNS provider takes it: {@code dns://host:port}, IPv6 in brackets. */
    public String url() {
      return "dns://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    @Override
    public String toString() {
      return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
  }

  public DnsBackendConfig {
    servers = List.copyOf(servers);
  }

  /** Letters, digits, '-' and '_' (SRV names: {@code _spark._tcp.x}) in dot-separated labels. */
  private static final Pattern NAME =
      Pattern.compile(
          "(?=.{1,253}\\.?$)[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})(\\.[A-Za-z0-9_][A-Za-z0-9_-]{0,62})*\\.?");

  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

  /** What the entry names: {@code name:port} (A/AAAA) or {@code name} (SRV). */
  public String source() {
    return port.isPresent() ? name + ":" + port.getAsInt() : name + " (SRV)";
  }

  /** Whether SRV records are asked (no port given). */
  public boolean srv() {
    return port.isEmpty();
  }

  /** A {@code - dns: ...} entry of a pool's {@code backends}. */
  static DnsBackendConfig read(YamlNode node) {
    List<String> keys = new ArrayList<>(List.of("dns", "refresh", "servers"));
    keys.addAll(BackendConfig.SETTINGS);
    if (node.has("address")) {
      throw node.error("set address or dns, not both");
    }
    node.allowOnly(keys.toArray(String[]::new));
    String text =
        node.requiredString(
            "dns",
            "name:port (every A/AAAA record is a backend, e.g."
                + " spark-headless.spark.svc.cluster.local:15002) or a name (its SRV records)");
    String name = text;
    OptionalInt port = OptionalInt.empty();
    int colon = text.lastIndexOf(':');
    if (colon >= 0) {
      name = text.substring(0, colon);
      port = OptionalInt.of(port(node, text.substring(colon + 1)));
    }
    if (!NAME.matcher(name).matches() || name.contains("..")) {
      throw node.errorAt(
          "dns",
          "must be a DNS name with an optional :port (letters, digits, '-', '_' and dots; no IP"
              + " address: list that as address), got '"
              + text
              + "'");
    }
    if (IPV4.matcher(name.endsWith(".") ? name.substring(0, name.length() - 1) : name).matches()) {
      throw node.errorAt(
          "dns", "is an IP address, not a name: list it as a backend host:port instead");
    }
    Duration refresh =
        node.duration("refresh", DEFAULT_REFRESH, Duration.ofSeconds(1), Duration.ofHours(1));
    List<Server> servers = new ArrayList<>();
    if (node.has("servers")) {
      List<String> listed = node.stringOrList("servers");
      if (listed.isEmpty()) {
        throw node.errorAt(
            "servers",
            "is empty: list DNS servers (ip:port), or remove it for the system resolver");
      }
      for (String s : listed) servers.add(server(node, s));
    }
    BackendConfig backend = BackendConfig.settings(node, name, port.orElse(0));
    return new DnsBackendConfig(name, port, refresh, servers, backend);
  }

  private static int port(YamlNode node, String text) {
    int port;
    try {
      port = Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw node.errorAt("dns", "port must be a number, got '" + text + "'");
    }
    if (port < 1 || port > 65535) {
      throw node.errorAt("dns", "port must be between 1 and 65535, got " + port);
    }
    return port;
  }

  /** {@code ip}, {@code ip:port}, {@code [ipv6]:port} or {@code ipv6}; port 53 when not given. */
  private static Server server(YamlNode node, String text) {
    String host = text;
    int port = 53;
    if (text.startsWith("[")) {
      int end = text.indexOf(']');
      if (end < 0) throw serverError(node, text);
      host = text.substring(1, end);
      String rest = text.substring(end + 1);
      if (!rest.isEmpty()) {
        if (!rest.startsWith(":")) throw serverError(node, text);
        port = serverPort(node, text, rest.substring(1));
      }
    } else if (text.indexOf(':') == text.lastIndexOf(':') && text.indexOf(':') > 0) {
      host = text.substring(0, text.indexOf(':'));
      port = serverPort(node, text, text.substring(text.indexOf(':') + 1));
    }
    boolean v4 = IPV4.matcher(host).matches();
    boolean v6 = host.contains(":") && host.matches("[0-9A-Fa-f:.]+");
    if (!v4 && !v6) throw serverError(node, text);
    try {
      // An IP literal: parsed, never looked up.
      host = java.net.InetAddress.getByName(host).getHostAddress();
    } catch (java.net.UnknownHostException e) {
      throw serverError(node, text);
    }
    return new Server(host, port);
  }

  private static int serverPort(YamlNode node, String text, String port) {
    try {
      int p = Integer.parseInt(port);
      if (p >= 1 && p <= 65535) return p;
    } catch (NumberFormatException e) {
      // reported below
    }
    throw serverError(node, text);
  }

  private static RuntimeException serverError(YamlNode node, String text) {
    return node.errorAt(
        "servers",
        "each must be a DNS server's IP address with an optional port (127.0.0.1:5353, 10.96.0.10,"
            + " [fd00::10]:53), got '"
            + text
            + "'");
  }

  /** The same source (name, port, servers, refresh): what a reload may not change without a restart. */
  public boolean sameSource(DnsBackendConfig other) {
    return name.equals(other.name)
        && port.equals(other.port)
        && refresh.equals(other.refresh)
        && servers.equals(other.servers)
        && backend.tls().equals(other.backend.tls())
        && backend.token().isPresent() == other.backend.token().isPresent();
  }

  /** The configured host name, for logs. */
  @Override
  public String toString() {
    return "dns " + source() + (servers.isEmpty() ? "" : " via " + servers);
  }
}
