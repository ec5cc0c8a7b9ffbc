package io.sparkgate.policy;

import io.grpc.Status;

/**
 * One compiled rule. {@code when} is null for a rule that matches on {@code match} alone.
 *
 * @param line where the rule starts in its file, for messages
 */
record Rule(
    String name,
    String description,
    Effect effect,
    boolean shadow,
    Match match,
    Condition when,
    MessageTemplate message,
    Status.Code code,
    String errorClass,
    String sqlState,
    String rewriter,
    int line) {}
