/**
 * The {@code sparkgate} command line (serve, dev-certs, audit verify, policy check, test and explain): parses
 * arguments and calls the other packages' public API; what the proxy does is decided there, never here.
 */
package io.sparkgate.cli;
