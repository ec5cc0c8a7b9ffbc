/**
 * Engines on demand: pools whose Spark Connect servers Sparkgate starts with {@code spark-submit} when a user,
 * group or tenant first needs one, keeps warm, shares across replicas (one engine per key, agreed in Redis)
 * and stops when idle. The router asks {@link io.sparkgate.engine.Engines} which engine serves a principal.
 */
package io.sparkgate.engine;
