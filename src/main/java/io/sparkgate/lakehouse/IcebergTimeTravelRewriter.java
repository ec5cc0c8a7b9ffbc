package io.sparkgate.lakehouse;

import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.SessionView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Rewrites Iceberg SQL time travel in one SQL text into Iceberg's table-name forms, which a mixed Hudi +
 * Iceberg server runs:
 *
 * <ul>
 *   <li>{@code t VERSION AS OF 42} and {@code t FOR SYSTEM_VERSION AS OF 42} become {@code t.snapshot_id_42};
 *   <li>{@code t TIMESTAMP AS OF '<ts>'} and {@code t FOR SYSTEM_TIME AS OF '<ts>'} become
 *       {@code t.at_timestamp_<epoch millis>}, the string read as Spark reads it, in the session time zone
 *       ({@link SessionView#timeZone()}; UTC when unknown, so pin the session zone or the server's
 *       {@code spark.sql.session.timeZone} to UTC where that matters).
 * </ul>
 *
 * <p>Only the relation changes; every other character of the statement is kept. Within the relation:
 * the clause and the blank between it and the name are replaced by the suffix (a comment there is kept); a
 * one-part name is qualified with its catalog and database (a two-part {@code trips.snapshot_id_1} would
 * name namespace {@code trips}); and a relation without an alias gets {@code AS <table name>}, because the
 * suffixed name would otherwise change the implicit alias and break {@code trips.col} references (qualifiers
 * naming more than the table, like {@code lake.trips.col}, still break, and fail on the server).
 *
 * <p>Refused (with {@link TimeTravelRefusals}' message): a string version (a branch or tag name), an
 * expression (anything but an integer or a string literal), a timestamp that cannot be converted or is before
 * 1970, a name hidden in {@code IDENTIFIER(...)}, and facts whose spans do not fit the text.
 */
public final class IcebergTimeTravelRewriter {
  private static final Pattern SIMPLE_IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern DIGITS = Pattern.compile("[0-9]+");

  private IcebergTimeTravelRewriter() {}

  /** The rewritten SQL and what changed. */
  public record Result(String sql, List<Rewrite> rewrites) {
    public Result {
      rewrites = List.copyOf(rewrites);
    }
  }

  /**
   * Rewrites {@code sql} at the given TIME_TRAVEL facts, which must come from this very text (their spans index
   * it) and be the ones to rewrite (on Iceberg tables: see {@link MixedTableFormats#isBlocked}).
   */
  public static Result rewrite(String sql, List<Fact> timeTravel, SessionView session)
      throws RefusedException {
    String zone = session == null ? null : session.timeZone();
    List<Edit> edits = new ArrayList<>();
    List<Rewrite> rewrites = new ArrayList<>();
    for (Fact tt : timeTravel) {
      Relation r = relation(sql, tt, zone);
      edits.addAll(r.edits);
      rewrites.add(r.rewrite);
    }
    // From the last position to the first, so earlier offsets stay valid; inserts at one position
    // keep their relative order.
    edits.sort(Comparator.comparingInt(Edit::start).thenComparingInt(Edit::order).reversed());
    StringBuilder out = new StringBuilder(sql);
    int previousStart = Integer.MAX_VALUE;
    for (Edit e : edits) {
      if (e.end > previousStart)
        throw refuse(timeTravel.get(0), zone, "two time-travel clauses overlap");
      out.replace(e.start, e.end, e.text);
      previousStart = e.start;
    }
    return new Result(out.toString(), rewrites);
  }

  private record Edit(int start, int end, String text, int order) {}

  private record Relation(List<Edit> edits, Rewrite rewrite) {}

  private static Relation relation(String sql, Fact tt, String zone) throws RefusedException {
    if (tt.kind() != Fact.Kind.TIME_TRAVEL || !"sql".equals(tt.get("source"))) {
      throw refuse(tt, zone, "it is not SQL time travel");
    }
    int tableStart = tt.intAttr("table_start");
    int tableEnd = tt.intAttr("table_end");
    int clauseStart = tt.intAttr("clause_start");
    int clauseEnd = tt.intAttr("clause_end");
    int aliasInsert = tt.intAttr("alias_insert");
    String alias = tt.get("alias");
    if (tableStart < 0
        || tableStart >= tableEnd
        || tableEnd > clauseStart
        || clauseStart >= clauseEnd
        || clauseEnd > sql.length()
        || alias == null
        || (alias.isEmpty() && (aliasInsert < clauseEnd || aliasInsert > sql.length()))) {
      throw refuse(tt, zone, "the clause's position in the SQL text is not known");
    }
    String writtenTable = sql.substring(tableStart, tableEnd);
    if (writtenTable.endsWith(")"))
      throw refuse(tt, zone, "the table name is given by IDENTIFIER(...)");

    String suffix = suffix(tt, zone);
    List<Edit> edits = new ArrayList<>();
    String prefix = "";
    if (tt.intAttr("table_parts") == 1) {
      prefix = quote(tt.get("catalog")) + "." + namespace(tt.get("database"));
      edits.add(new Edit(tableStart, tableStart, prefix, 0));
    }
    String gap = sql.substring(tableEnd, clauseStart);
    // A comment between name and clause stays (spaces after it go with the clause; a newline that
    // ends a `--` comment must stay).
    String replacement = "." + suffix + (gap.isBlank() ? "" : stripTrailingBlanks(gap));
    edits.add(new Edit(tableEnd, clauseEnd, replacement, 1));
    int relationEnd = clauseEnd;
    String aliasText = "";
    if (alias.isEmpty()) {
      aliasText = " AS " + quote(tt.get("name"));
      edits.add(new Edit(aliasInsert, aliasInsert, aliasText, 2));
      relationEnd = aliasInsert;
    }
    String from = sql.substring(tableStart, relationEnd);
    String to =
        prefix + writtenTable + replacement + sql.substring(clauseEnd, relationEnd) + aliasText;
    return new Relation(edits, new Rewrite(tt.get("table"), from, to, tt.get("where")));
  }

  private static String suffix(Fact tt, String zone) throws RefusedException {
    String type = tt.get("value_type");
    String value = tt.get("value");
    if ("VERSION".equals(tt.subkind())) {
      if ("string".equals(type)) {
        throw refuse(
            tt,
            zone,
            "the version '"
                + value
                + "' is a string (a branch or tag name, or a snapshot id "
                + "in quotes), whose meaning depends on the table's refs");
      }
      if (!"integer".equals(type) || value == null || !DIGITS.matcher(value).matches()) {
        throw refuse(tt, zone, "the version is an expression, not an integer literal");
      }
      try {
        return "snapshot_id_" + Long.parseLong(value);
      } catch (NumberFormatException e) {
        throw refuse(tt, zone, "the version " + value + " is not a snapshot id (out of range)");
      }
    }
    if (!"string".equals(type) || value == null) {
      throw refuse(
          tt,
          zone,
          "the timestamp is an expression, not a string literal, so its value is only known "
              + "when the query runs");
    }
    long millis;
    try {
      millis = TimestampValues.epochMillis(value, zone);
    } catch (IllegalArgumentException e) {
      throw refuse(tt, zone, e.getMessage());
    }
    if (millis < 0) throw refuse(tt, zone, "the timestamp '" + value + "' is before 1970");
    return "at_timestamp_" + millis;
  }

  private static RefusedException refuse(Fact tt, String zone, String reason) {
    return new RefusedException(
        tt.get("table") == null ? "" : tt.get("table"),
        reason,
        TimeTravelRefusals.message(tt, zone, reason));
  }

  private static String stripTrailingBlanks(String s) {
    int end = s.length();
    while (end > 0 && (s.charAt(end - 1) == ' ' || s.charAt(end - 1) == '\t')) end--;
    return s.substring(0, end);
  }

  /** A name part as Spark reads it back: bare when it is a plain identifier, else backquoted. */
  static String quote(String part) {
    return SIMPLE_IDENTIFIER.matcher(part).matches() ? part : "`" + part.replace("`", "``") + "`";
  }

  /** The inspector joins namespace parts with dots; empty for a table right under its catalog. */
  private static String namespace(String database) {
    if (database == null || database.isEmpty()) return "";
    StringBuilder b = new StringBuilder();
    for (String part : database.split("\\.", -1)) b.append(quote(part)).append('.');
    return b.toString();
  }
}
