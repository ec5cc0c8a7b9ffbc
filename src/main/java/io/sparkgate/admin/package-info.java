/**
 * The admin listener: health and readiness for probes (open, pass/fail only), and for operators with the
 * admin token or a client certificate the metrics scrape, the admin API and the console. Readiness is the
 * one answer to "should this replica get new clients", shared by {@code /readyz} and the gRPC health service.
 * Its HTTP server is Netty's own (io.netty), never gRPC's private shaded copy of it.
 */
package io.sparkgate.admin;
