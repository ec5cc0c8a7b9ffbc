/**
 * The proxy's one connection to Redis, shared by the session registry and the shared quotas: Lettuce,
 * reconnecting on its own, failing commands at once while disconnected rather than queueing them, so that a
 * call waiting on Redis is bounded by {@code sessions.redis_timeout}.
 */
package io.sparkgate.redis;
