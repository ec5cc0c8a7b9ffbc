package io.sparkgate.lakehouse;

import io.sparkgate.inspect.Fact;

/**
 * The user-facing text of a refused Iceberg SQL time travel on a mixed Hudi + Iceberg server: what was
 * refused, on which table, and the form that works instead. Shared by the policy's deny path and by
 * {@link IcebergTimeTravelRewriter} when a clause cannot be rewritten.
 */
public final class TimeTravelRefusals {
  private TimeTravelRefusals() {}

  /**
   * The message for one TIME_TRAVEL fact. {@code sessionTimeZone} (null: UTC) turns a timestamp string into
   * the epoch milliseconds the alternative needs; {@code reason} (may be null) says why a rewrite was not
   * possible.
   */
  public static String message(Fact timeTravel, String sessionTimeZone, String reason) {
    String table = timeTravel.get("table");
    String clause = timeTravel.get("syntax") + " " + timeTravel.get("value_text");
    StringBuilder b =
        new StringBuilder()
            .append("Iceberg SQL time travel (")
            .append(clause)
            .append(") on ")
            .append(table)
            .append(
                " is not supported on this server: it loads both the Hudi and the Iceberg session extensions, ")
            .append(
                "and Spark fails such a query (INTERNAL_ERROR: unresolved operator TimeTravelRelation).");
    if (reason != null && !reason.isEmpty())
      b.append(" Sparkgate did not rewrite it: ").append(reason).append('.');
    b.append(" Instead, ").append(alternative(timeTravel, sessionTimeZone));
    return b.toString();
  }

  /** The working alternative for one fact, as a sentence fragment. */
  static String alternative(Fact tt, String sessionTimeZone) {
    String table = tt.get("table");
    String load = ".load(\"" + table + "\")";
    boolean version = "VERSION".equals(tt.subkind());
    String valueType = tt.get("value_type");
    if (version && "integer".equals(valueType)) {
      String id = tt.get("value");
      return "read the snapshot with spark.read.format(\"iceberg\").option(\"snapshot-id\", "
          + id
          + ")"
          + load
          + ", or name it in SQL as "
          + table
          + ".snapshot_id_"
          + id
          + ".";
    }
    if (version && "string".equals(valueType)) {
      String ref = tt.get("value");
      return "read the branch or tag with spark.read.format(\"iceberg\").option(\"branch\", \""
          + ref
          + "\") (or .option(\"tag\", \""
          + ref
          + "\"))"
          + load
          + ", or name it in SQL as "
          + table
          + ".branch_"
          + ref
          + " (or "
          + table
          + ".tag_"
          + ref
          + "); for a snapshot id use .option(\"snapshot-id\", <id>) or "
          + table
          + ".snapshot_id_<id>.";
    }
    if (!version && "string".equals(valueType)) {
      try {
        long millis = TimestampValues.epochMillis(tt.get("value"), sessionTimeZone);
        return "read the table as of that time with spark.read.format(\"iceberg\").option(\"as-of-timestamp\", "
            + millis
            + ")"
            + load
            + ", or name it in SQL as "
            + table
            + ".at_timestamp_"
            + millis
            + " (epoch milliseconds), or pick a snapshot id from "
            + table
            + ".snapshots and use "
            + ".option(\"snapshot-id\", <id>) or "
            + table
            + ".snapshot_id_<id>.";
      } catch (IllegalArgumentException e) {
        // fall through to the generic form
      }
    }
    return "use spark.read.format(\"iceberg\").option(\"snapshot-id\", <id>)"
        + load
        + " (or .option("
        + "\"as-of-timestamp\", <epoch millis>)), or name the table in SQL as "
        + table
        + ".snapshot_id_<id> or "
        + table
        + ".at_timestamp_<epoch millis>, with a literal id or time (ids are in "
        + table
        + ".snapshots).";
  }
}
