/**
 * The meters: every call is counted and timed, and the other packages' own counters are read only when
 * scraped (on the admin listener), so no stage depends on the metrics library; no label ever carries a
 * principal, a token, a session or anything from a request.
 */
package io.sparkgate.metrics;
