package io.sparkgate.compat;

import java.nio.file.Path;

/**
 * Where a client connects: the proxy's TLS port (a private CA signed its certificate), the bearer token it
 * accepts, and the Spark version behind it.
 *
 * <p>A <em>direct</em> target ({@link #direct}: {@code token == null} and {@code caPem == null}, so also no
 * trust store) means plaintext straight to the Spark server, no proxy: the suite reruns a scenario that failed
 * through the proxy that way, to tell Spark's own client/server version skew (fails directly too) from
 * something Sparkgate did (works directly). A client connects to it with {@code sc://host:port} and nothing
 * else.
 *
 * @param caPem the private CA's certificate (PEM), which each client must be told to trust its own way
 * @param trustStore the same CA as a PKCS#12 trust store, for JVM clients ({@code javax.net.ssl.trustStore})
 */
record Target(
    String host,
    int port,
    String token,
    Path caPem,
    Path trustStore,
    String trustStorePassword,
    String serverVersion) {

  /** Plaintext, no token, straight to the Spark server at {@code host:port}. */
  static Target direct(String host, int port, String serverVersion) {
    return new Target(host, port, null, null, null, null, serverVersion);
  }

  /** True for a {@link #direct} target: no TLS, no token, no proxy. */
  boolean isDirect() {
    return token == null && caPem == null;
  }

  @Override
  public String toString() {
    // Never the token.
    return (isDirect()
            ? "Spark " + serverVersion + " directly at "
            : "Sparkgate (Spark " + serverVersion + ") at ")
        + host
        + ":"
        + port;
  }
}
