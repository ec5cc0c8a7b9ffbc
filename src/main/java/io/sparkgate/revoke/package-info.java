/**
 * The operator's kill switch: principals and JWT ids cut off now, kept where the replicas share state, checked
 * on every call right after authentication, and acted on (running operations interrupted, sessions released)
 * by every replica that holds them.
 */
package io.sparkgate.revoke;
