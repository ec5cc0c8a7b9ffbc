/**
 * One call, read once: the per-call context ({@link io.sparkgate.call.Call}: principal, request head, facts,
 * decision, route and the typed {@link io.sparkgate.call.AuditEvent}) and the {@link io.sparkgate.call.Stage}
 * interface that authenticate, inspect, decide, route and audit implement; {@code Sparkgate} assembles them
 * into a {@link io.sparkgate.call.Pipeline} in the order a call meets them.
 */
package io.sparkgate.call;
