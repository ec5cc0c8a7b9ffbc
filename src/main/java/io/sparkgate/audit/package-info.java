/**
 * The audit stage and the tamper-evident audit log: one hash-chained JSON line for every Spark Connect call,
 * whatever ended it, queued without blocking the call and written by one writer thread; it records what the
 * stages left in the {@code io.sparkgate.call} context, imports no other stage, and refuses a call only when
 * {@code audit.required} is set and the log cannot take its record.
 */
package io.sparkgate.audit;
