/**
 * The decide stage and the policy it enforces: policy files compiled once into immutable rules, reloaded whole
 * when they change, and evaluated over each request's facts and the backend profile into allow, deny or
 * rewrite, failing closed; rules see facts, never request bytes, and the stage meets the other stages only in
 * {@code io.sparkgate.call} (reading the facts {@code io.sparkgate.inspect} produced).
 */
package io.sparkgate.policy;
