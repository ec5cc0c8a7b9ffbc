/**
 * What is happening on this replica now, for the admin API and console: live sessions, running operations and
 * recent refusals, read from what the other stages recorded in each {@link io.sparkgate.call.Call} (as the
 * audit record is); it decides nothing, refuses nothing and keeps bounded memory.
 */
package io.sparkgate.live;
