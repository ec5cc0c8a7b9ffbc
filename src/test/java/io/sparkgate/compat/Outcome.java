package io.sparkgate.compat;

/**
 * What a client program reported for one scenario, one JSON line on its standard output: {@code
 * {"scenario": "range", "outcome": "pass", "detail": "..."}}.
 *
 * <ul>
 *   <li>{@code pass} / {@code fail}: a scenario that must work, judged by the client program itself (it
 *       knows the expected result); detail says what it saw.
 *   <li>{@code refused}: a refusal scenario was refused; detail is exactly the text the client shows its
 *       user (Python's {@code str(e)}, Go's {@code err.Error()}, the JVM's {@code getMessage()}), which
 *       {@link Verdict} judges.
 *   <li>{@code ran}: a refusal scenario was not refused (detail: what it returned).
 *   <li>{@code unsupported}: this client has no such API (the Go client has no Python UDFs); detail says why.
 * </ul>
 */
record Outcome(Scenario scenario, String outcome, String detail) {}
