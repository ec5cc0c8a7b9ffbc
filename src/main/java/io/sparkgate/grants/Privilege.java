package io.sparkgate.grants;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/** What a grant lets its holders do to a table, a namespace or a path. */
public enum Privilege {
  /** Read rows, and the table's metadata (DESCRIBE, SHOW CREATE TABLE, columns, properties, partitions). */
  SELECT,
  /** Change rows: INSERT, UPDATE, DELETE, MERGE, overwrite, TRUNCATE, LOAD DATA. */
  MODIFY,
  /** Create a table, view or function (in a namespace: the namespace itself). */
  CREATE,
  /** Change a table's or namespace's definition: columns, properties, partitions, location, name. */
  ALTER,
  /** Drop a table, view, function or namespace. */
  DROP,
  /** Look after a table: ANALYZE, REFRESH, CACHE, repair, procedures and compaction. */
  MAINTAIN;

  /** The name written in policy files and shown in messages. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Every privilege {@code name} stands for ({@code all} for every one), or null when it names none. */
  static Set<Privilege> parse(String name) {
    if (name.equals("all")) return EnumSet.allOf(Privilege.class);
    for (Privilege p : values()) if (p.label().equals(name)) return EnumSet.of(p);
    return null;
  }
}
