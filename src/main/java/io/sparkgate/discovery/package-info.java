/**
 * Backends found through DNS: a pool's {@code - dns: name:port} entry (every A/AAAA record a backend) or
 * {@code - dns: name} (its SRV records), asked again every refresh off the event loops. Addresses that appear
 * join the pool in the router; addresses that vanish are drained like a backend that went down; a failed or
 * empty answer keeps the last good one, counted and shown in readiness.
 */
package io.sparkgate.discovery;
