package io.sparkgate.compat;

import java.nio.file.Path;

/**
 * Where a client connects: the proxy's TLS port (a private CA signed its certificate), the bearer token it
 * accepts, and the Spark version behind it.
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
    String serverVersion) {}
