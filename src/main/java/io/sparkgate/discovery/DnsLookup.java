package io.sparkgate.discovery;

import io.sparkgate.config.DnsBackendConfig;
import java.util.SortedSet;

/** Asks DNS once for the backends a {@code dns:} entry names. */
interface DnsLookup {
  /**
   * The backends the entry's records name now, as {@code host:port} (IPv6 in brackets), sorted; empty when the
   * name has no such records (NXDOMAIN or no data).
   *
   * @throws DnsFailure when no server answered, or one answered with an error (SERVFAIL, REFUSED)
   */
  SortedSet<String> backends(DnsBackendConfig entry) throws DnsFailure;

  /** DNS did not answer (timeout, server down) or answered with an error; the message says which. */
  final class DnsFailure extends Exception {
    DnsFailure(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
