/**
 * OpenTelemetry traces: one server span per Spark Connect call, continuing the client's W3C trace context and
 * passing Sparkgate's own on to the backend, with what the other stages recorded in the {@link
 * io.sparkgate.call.Call} as its attributes (as the audit record reads them), exported over OTLP by the SDK,
 * without the agent (docs/tracing.md).
 */
package io.sparkgate.tracing;
