/**
 * Quotas: requests a second, request size and concurrent operations per principal and per tenant, enforced
 * by one stage after the policy decision (refused requests never count) and shared across replicas through
 * Redis when there is one; it never waits on Redis except for the one round trip that starts an ExecutePlan,
 * falls back to counting on its own replica when Redis is away, and meets the other stages only in {@code
 * io.sparkgate.call}.
 */
package io.sparkgate.quota;
