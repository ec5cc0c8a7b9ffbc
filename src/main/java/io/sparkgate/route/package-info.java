/**
 * Routing: the pool each principal is routed to, the backend of that pool each session is placed on
 * (rendezvous hashing over the healthy backends, recorded in the session registry, shared by replicas through
 * Redis), and backend health from probes and failed calls. A placed session is never moved.
 */
package io.sparkgate.route;
