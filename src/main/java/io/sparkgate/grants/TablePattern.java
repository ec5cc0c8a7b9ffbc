package io.sparkgate.grants;

import io.sparkgate.config.Glob;
import java.util.Locale;
import java.util.Optional;

/**
 * A grant's table glob, {@code catalog.namespace.table}: split at its first and last dot, each part a glob
 * matched in any case as Spark compares names ({@code *} within the namespace also takes a nested namespace's
 * dots). A part may hold {@code {principal}}, the caller's verified name as one identifier; such a part has
 * no other wildcard, and never matches a principal whose name holds a dot, a backtick or a wildcard.
 */
final class TablePattern {
  static final String PRINCIPAL = "{principal}";

  private final String text;
  private final Part catalog;
  private final Part namespace;
  private final Part table;

  private TablePattern(String text, Part catalog, Part namespace, Part table) {
    this.text = text;
    this.catalog = catalog;
    this.namespace = namespace;
    this.table = table;
  }

  /** @throws IllegalArgumentException with what is wrong, for the policy compiler's message */
  static TablePattern parse(String text) {
    int first = text.indexOf('.');
    int last = text.lastIndexOf('.');
    if (first < 0 || first == last) {
      throw new IllegalArgumentException(
          "'" + text + "' is not catalog.namespace.table (e.g. spark_catalog.finance.*)");
    }
    return new TablePattern(
        text,
        Part.of(text.substring(0, first), text),
        Part.of(text.substring(first + 1, last), text),
        Part.of(text.substring(last + 1), text));
  }

  String text() {
    return text;
  }

  /** The catalog, lower case, when it is one name (no wildcard, no placeholder); else null. */
  String exactCatalog() {
    return catalog.exact;
  }

  /** The namespace, lower case, when it is one name; else null. */
  String exactNamespace() {
    return namespace.exact;
  }

  /** Whether this pattern takes every table of a namespace it takes (its table part is {@code *}). */
  boolean wholeNamespace() {
    return table.glob != null && table.glob.matchesEverything();
  }

  boolean matchesTable(String principal, String cat, String ns, String name) {
    return catalog.matches(cat, principal)
        && namespace.matches(ns, principal)
        && table.matches(name, principal);
  }

  /** Whether a part holds {@code {principal}}. */
  boolean hasPlaceholder() {
    return catalog.glob == null || namespace.glob == null || table.glob == null;
  }

  /**
   * The principal for whom this pattern (with a placeholder) takes the table, as the table's name spells
   * it; empty when it takes it for no one: every part with the placeholder must name the same one.
   */
  Optional<String> principalFor(String cat, String ns, String name) {
    String[] found = {null};
    boolean fits =
        catalog.fitsFor(cat, found) && namespace.fitsFor(ns, found) && table.fitsFor(name, found);
    return fits && found[0] != null && oneIdentifier(found[0])
        ? Optional.of(found[0])
        : Optional.empty();
  }

  boolean matchesNamespace(String principal, String cat, String ns) {
    return catalog.matches(cat, principal) && namespace.matches(ns, principal);
  }

  /** Whether a principal's name can stand as one name part: not empty, no dot, backtick or wildcard. */
  static boolean oneIdentifier(String principal) {
    if (principal.isEmpty()) return false;
    for (int i = 0; i < principal.length(); i++) {
      char c = principal.charAt(i);
      if (c == '.' || c == '`') return false;
    }
    return !Glob.hasWildcards(principal);
  }

  /** One part: a glob, or a literal around the placeholder. */
  private static final class Part {
    final String text;
    final Glob glob; // null when the part has the placeholder
    final String before; // the literal text around the placeholder
    final String after;
    final String exact; // lower case, when the part is one name

    private Part(String text, Glob glob, String before, String after, String exact) {
      this.text = text;
      this.glob = glob;
      this.before = before;
      this.after = after;
      this.exact = exact;
    }

    static Part of(String part, String whole) {
      if (part.isEmpty()) {
        throw new IllegalArgumentException("'" + whole + "' has an empty part");
      }
      int at = part.indexOf(PRINCIPAL);
      if (at < 0) {
        Glob glob = Glob.anyCase(part);
        return new Part(
            part, glob, null, null, !glob.hasWildcards() ? part.toLowerCase(Locale.ROOT) : null);
      }
      String before = part.substring(0, at);
      String after = part.substring(at + PRINCIPAL.length());
      if (Glob.hasWildcards(before + after) || (before + after).contains("{")) {
        throw new IllegalArgumentException(
            "'" + whole + "': a part with " + PRINCIPAL + " takes no wildcard and one placeholder");
      }
      return new Part(part, null, before, after, null);
    }

    /**
     * Whether {@code value} fits this part; a placeholder part takes the name it stands for into {@code
     * found[0]}, or fits only if that is the name already there (in any case, as names are compared).
     */
    boolean fitsFor(String value, String[] found) {
      if (glob != null) return glob.matches(value);
      int end = value.length() - after.length();
      if (end <= before.length()
          || !value.regionMatches(true, 0, before, 0, before.length())
          || !value.regionMatches(true, end, after, 0, after.length())) {
        return false;
      }
      String name = value.substring(before.length(), value.length() - after.length());
      if (found[0] == null) found[0] = name;
      return found[0].equalsIgnoreCase(name);
    }

    /** A null {@code principal} stands for any principal's name. */
    boolean matches(String value, String principal) {
      if (glob != null) return glob.matches(value);
      if (value == null) return false;
      if (principal == null) {
        String v = value.toLowerCase(Locale.ROOT);
        return v.length() > before.length() + after.length()
            && v.startsWith(before.toLowerCase(Locale.ROOT))
            && v.endsWith(after.toLowerCase(Locale.ROOT));
      }
      if (!oneIdentifier(principal)) return false;
      return value.equalsIgnoreCase(before + principal + after);
    }
  }
}
