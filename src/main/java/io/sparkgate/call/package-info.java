/**
 * One call, read once: the per-call context ({@link io.sparkgate.call.Call}: principal, request head, facts,
 * decision, route and the typed {@link io.sparkgate.call.AuditEvent}) and the {@link io.sparkgate.call.Stage}
 * interface that authenticate, inspect, decide, quota, route and audit implement; {@code Sparkgate} assembles
 * them into a {@link io.sparkgate.call.Pipeline} in the order a call meets them.
 *
 * <p>{@link io.sparkgate.call.MatchBlock} is whom a {@code match:} block takes, the one reading that routes,
 * quota overrides and policy rules share: identities are matched exactly.
 *
 * <p>The stage packages (auth, inspect, policy, lakehouse, audit, route, quota) do not import each other,
 * inspect's facts aside, which this context carries: they meet here.
 */
package io.sparkgate.call;
