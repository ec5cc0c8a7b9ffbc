package io.sparkgate.discovery;

import io.sparkgate.config.DnsBackendConfig;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;
import javax.naming.CommunicationException;
import javax.naming.Context;
import javax.naming.NameNotFoundException;
import javax.naming.NamingEnumeration;
import javax.naming.NamingException;
import javax.naming.ServiceUnavailableException;
import javax.naming.directory.Attribute;
import javax.naming.directory.Attributes;
import javax.naming.directory.DirContext;
import javax.naming.directory.InitialDirContext;

/**
 * The JDK's own DNS client (JNDI's DNS provider, module {@code jdk.naming.dns}): A, AAAA and SRV queries to the
 * entry's servers, or, without servers, A/AAAA through the system resolver ({@link InetAddress}: hosts file,
 * search domains, the JVM's cache) and SRV to the system's name servers. No library to add, and it speaks
 * UDP with TCP fallback for long answers.
 */
final class JndiDnsLookup implements DnsLookup {
  /** The provider waits this long for the first answer, doubling each retry, per server. */
  private static final String TIMEOUT_MILLIS = "1000";

  private static final String RETRIES = "2";

  @Override
  public SortedSet<String> backends(DnsBackendConfig entry) throws DnsFailure {
    if (entry.srv()) return srv(entry);
    SortedSet<String> out = new TreeSet<>();
    for (InetAddress a : addresses(entry, entry.name())) {
      out.add(hostPort(a, entry.port().getAsInt()));
    }
    return out;
  }

  private SortedSet<String> srv(DnsBackendConfig entry) throws DnsFailure {
    List<String> records = records(entry, entry.name(), "SRV");
    SortedSet<String> out = new TreeSet<>();
    for (String record : records) {
      // priority weight port target: every target serves; priority and weight are for clients that
      // pick one.
      String[] f = record.trim().split("\\s+");
      if (f.length != 4) continue;
      int port;
      try {
        port = Integer.parseInt(f[2]);
      } catch (NumberFormatException e) {
        continue;
      }
      if (port < 1 || port > 65535 || f[3].equals(".")) continue;
      for (InetAddress a : addresses(entry, f[3])) out.add(hostPort(a, port));
    }
    return out;
  }

  /** The A and AAAA records of {@code name}; empty when it has none. */
  private List<InetAddress> addresses(DnsBackendConfig entry, String name) throws DnsFailure {
    if (entry.servers().isEmpty()) {
      try {
        return List.of(InetAddress.getAllByName(strip(name)));
      } catch (UnknownHostException e) {
        // The system resolver does not tell "no such name" from "no answer".
        throw new DnsFailure("the system resolver found no address for " + name, e);
      }
    }
    List<InetAddress> out = new ArrayList<>();
    for (String record : records(entry, name, "A", "AAAA")) {
      try {
        // An IP literal from the answer: parsed, never looked up.
        out.add(InetAddress.getByName(record.trim()));
      } catch (UnknownHostException e) {
        // not an address: skip it
      }
    }
    return out;
  }

  /**
   * The records of these types; empty for NXDOMAIN or no data. JNDI's danger is a provider that deserializes
   * objects (LDAP, RMI); here the factory is pinned to DNS, whose attributes are the records' text, and only
   * attributes are asked, never a lookup of an object.
   */
  @SuppressWarnings("BanJNDI")
  private List<String> records(DnsBackendConfig entry, String name, String... types)
      throws DnsFailure {
    Hashtable<String, String> env = new Hashtable<>();
    env.put(Context.INITIAL_CONTEXT_FACTORY, "com.sun.jndi.dns.DnsContextFactory");
    env.put(
        Context.PROVIDER_URL,
        entry.servers().isEmpty()
            ? "dns:"
            : entry.servers().stream()
                .map(DnsBackendConfig.Server::url)
                .collect(Collectors.joining(" ")));
    env.put("com.sun.jndi.dns.timeout.initial", TIMEOUT_MILLIS);
    env.put("com.sun.jndi.dns.timeout.retries", RETRIES);
    DirContext context = null;
    try {
      context = new InitialDirContext(env);
      // Absolute: the provider must not append a domain of its own.
      Attributes attributes = context.getAttributes(absolute(name), types);
      List<String> out = new ArrayList<>();
      for (String type : types) {
        Attribute values = attributes.get(type);
        if (values == null) continue;
        NamingEnumeration<?> each = values.getAll();
        while (each.hasMore()) out.add(String.valueOf(each.next()));
      }
      return out;
    } catch (NameNotFoundException e) {
      return List.of();
    } catch (CommunicationException e) {
      throw new DnsFailure("no answer from " + servers(entry) + " for " + name, e);
    } catch (ServiceUnavailableException e) {
      throw new DnsFailure(servers(entry) + " failed to answer for " + name + " (SERVFAIL)", e);
    } catch (NamingException e) {
      throw new DnsFailure(
          "DNS query for "
              + name
              + " failed: "
              + e.getClass().getSimpleName()
              + " "
              + e.getExplanation(),
          e);
    } finally {
      if (context != null) {
        try {
          context.close();
        } catch (NamingException e) {
          // nothing held
        }
      }
    }
  }

  private static String servers(DnsBackendConfig entry) {
    return entry.servers().isEmpty() ? "the system's DNS servers" : entry.servers().toString();
  }

  private static String absolute(String name) {
    return name.endsWith(".") ? name : name + ".";
  }

  private static String strip(String name) {
    return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
  }

  /** {@code host:port} as a backend address is written: IPv6 in brackets, in the JDK's textual form. */
  static String hostPort(InetAddress address, int port) {
    String host = address.getHostAddress();
    int zone = host.indexOf('%');
    if (zone >= 0) host = host.substring(0, zone);
    return (address instanceof Inet6Address ? "[" + host + "]" : host) + ":" + port;
  }
}
