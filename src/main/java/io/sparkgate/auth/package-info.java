/**
 * The authenticate stage: establishes each call's {@link io.sparkgate.call.Principal} from its bearer token or
 * client certificate, or refuses it with UNAUTHENTICATED before the backend is contacted (the head stage
 * stamps it onto every request); no map, message or log line ever holds a token,
 * what an authenticated user may do is the policy's to decide, and it meets the other stages only in
 * {@code io.sparkgate.call}.
 */
package io.sparkgate.auth;
