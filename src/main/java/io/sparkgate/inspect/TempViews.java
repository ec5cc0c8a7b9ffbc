package io.sparkgate.inspect;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * A session's temporary views as Sparkgate tracks them: each view's name and what it read when it was created
 * (its footprint), so that a later one-part name Spark will read as the view stands for that data, not for a
 * table of the current namespace. The footprint is one line per table ({@code table<TAB>catalog<TAB>namespace
 * <TAB>name}) or path ({@code path<TAB>path<TAB>scheme<TAB>how it is written}), sorted; a view over another
 * view takes over that view's lines.
 */
public final class TempViews {
  /** The attributes a TABLE_READ (or a DROP VIEW's TABLE_WRITE) of a session's temporary view carries. */
  public static final String TEMP_VIEW = "temp_view";

  public static final String VIEW_READS = "view_reads";

  private static final Pattern SIMPLE = Pattern.compile("`?([A-Za-z0-9_]+)`?");

  private TempViews() {}

  /** What a request's plan reads, as a view created by it will stand for. */
  static String footprint(Facts facts) {
    TreeSet<String> lines = new TreeSet<>();
    for (Fact f : facts.all()) {
      if (f.kind() == Fact.Kind.TABLE_READ) {
        if ("true".equals(f.get(TEMP_VIEW))) {
          String reads = f.get(VIEW_READS);
          if (reads != null && !reads.isEmpty()) lines.addAll(List.of(reads.split("\n")));
        } else if (f.get("catalog") != null && f.get("name") != null) {
          lines.add(
              String.join(
                  "\t",
                  "table",
                  f.get("catalog"),
                  f.get("database") == null ? "" : f.get("database"),
                  f.get("name")));
        }
      } else if (f.kind() == Fact.Kind.PATH && f.get("path") != null) {
        lines.add(
            String.join(
                "\t",
                "path",
                f.get("path"),
                f.get("scheme") == null ? "" : f.get("scheme"),
                f.subkind()));
      }
    }
    return String.join("\n", lines);
  }

  /**
   * The view a fact creates (non-null only for a session's own temporary view), lower case; a name Sparkgate
   * cannot read as one simple identifier is not tracked, so reading it stays a table read.
   */
  static String created(Fact f) {
    boolean sqlView =
        f.kind() == Fact.Kind.TABLE_WRITE
            && (f.subkind().equals("createView") || f.subkind().equals("cacheTable"))
            && "true".equals(f.get("temporary"));
    boolean plan =
        f.kind() == Fact.Kind.CATALOG_OP
            && f.subkind().equals("create_temp_view")
            && !"true".equals(f.get("global"));
    return sqlView || plan ? simple(f.get("name")) : null;
  }

  /** The view a fact drops (DROP VIEW of a tracked view, catalog.dropTempView), lower case. */
  static String dropped(Fact f) {
    if (f.kind() == Fact.Kind.TABLE_WRITE
        && (f.subkind().equals("dropView") || f.subkind().equals("dropTable"))
        && "true".equals(f.get(TEMP_VIEW))) {
      return simple(f.get("name"));
    }
    if (f.kind() == Fact.Kind.CATALOG_OP && f.subkind().equals("drop_temp_view")) {
      return simple(f.get("view_name"));
    }
    return null;
  }

  /** The session's view of a one-part name, onto the fact being built: whether it is one. */
  static boolean mark(List<String> parts, SessionView session, FactSink.Builder fact) {
    if (parts.size() != 1) return false;
    String reads = session.tempView(parts.get(0));
    if (reads == null) return false;
    fact.put(TEMP_VIEW, "true").put(VIEW_READS, reads);
    return true;
  }

  private static String simple(String name) {
    if (name == null) return null;
    var m = SIMPLE.matcher(name.strip());
    return m.matches() ? m.group(1).toLowerCase(Locale.ROOT) : null;
  }

  /** The views after {@code facts}: created ones replace a view of the same name, dropped ones go. */
  static Map<String, String> next(Map<String, String> before, Facts facts) {
    Map<String, String> views = new java.util.HashMap<>(before);
    String footprint = null;
    for (Fact f : facts.all()) {
      String created = created(f);
      if (created != null) {
        if (footprint == null) footprint = footprint(facts);
        views.put(created, footprint);
      }
      String dropped = dropped(f);
      if (dropped != null) views.remove(dropped);
    }
    return Map.copyOf(views);
  }

  /** Whether a fact creates or drops a tracked view. */
  static boolean changes(Fact f) {
    return created(f) != null || dropped(f) != null;
  }
}
