/**
 * Iceberg SQL time travel on Spark servers that load both the Hudi and the Iceberg session extensions: when it
 * applies, the request rewriter a policy's {@code rewrite} rule names to turn it into Iceberg's table-name
 * forms, and the message shown when it is refused; it meets the other stages only in {@code io.sparkgate.call}.
 *
 * <p>Why: Iceberg SQL time travel ({@code VERSION AS OF}, {@code FOR SYSTEM_VERSION AS
 * OF}, {@code TIMESTAMP AS OF}, {@code FOR SYSTEM_TIME AS OF}) fails on a Spark server that loads both
 * session extensions (INTERNAL_ERROR: unresolved operator TimeTravelRelation), while Iceberg's own table-name
 * forms {@code <table>.snapshot_id_<id>} and {@code <table>.at_timestamp_<epoch millis>} work.
 *
 * <p>{@link io.sparkgate.lakehouse.MixedTableFormats} says when that applies and to which tables;
 * {@link io.sparkgate.lakehouse.TimeTravelRequestRewriter} is the policy's {@code rewrite} effect over a whole
 * request; {@link io.sparkgate.lakehouse.IcebergTimeTravelRewriter} does one SQL text;
 * {@link io.sparkgate.lakehouse.TimeTravelRefusals} writes the message a refusal (by the policy's deny path or
 * by a rewrite that is not safe) shows the user.
 */
package io.sparkgate.lakehouse;
