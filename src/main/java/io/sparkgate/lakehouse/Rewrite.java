package io.sparkgate.lakehouse;

/**
 * One time-travel clause rewritten, for the audit log: the qualified table, the relation text before
 * ({@code iceberg.lake.trips VERSION AS OF 42}) and after ({@code iceberg.lake.trips.snapshot_id_42}), and
 * where in the request the SQL text was ({@code plan.root.sql}; {@code sql} for a bare text).
 */
public record Rewrite(String table, String from, String to, String where) {}
