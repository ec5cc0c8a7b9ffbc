package io.sparkgate.inspect;

import java.util.Locale;

/**
 * Every path a request names becomes a PATH fact with the scheme it will actually reach: its own, or for a
 * path without one the scheme of the server's default file system (Hadoop resolves it against fs.defaultFS,
 * which is the local file system unless the cluster says otherwise). Subkinds say how it was written:
 * {@code file_scheme} ({@code file:}, {@code local:}), {@code absolute} and {@code relative} (no scheme),
 * {@code parent_ref} (a {@code ..} segment anywhere), {@code local_keyword} ({@code LOAD DATA LOCAL},
 * {@code INSERT OVERWRITE LOCAL DIRECTORY}) and {@code uri} (any other scheme). Policies decide by
 * {@code scheme}; plain string checks, the only question being "is there a scheme".
 */
final class LocalPaths {
  private LocalPaths() {}

  /** How the path is written (a PATH subkind), or null for an empty one. */
  static String classify(String path) {
    if (path == null) return null;
    String p = path.strip();
    if (p.isEmpty()) return null;
    String lower = p.toLowerCase(Locale.ROOT);
    if (lower.startsWith("file:") || lower.startsWith("local:")) return "file_scheme";
    if (hasParentSegment(p)) return "parent_ref";
    if (scheme(p) != null) return "uri";
    if (p.startsWith("/") || p.startsWith("\\") || p.startsWith("~") || isWindowsDrive(p))
      return "absolute";
    return "relative"; // resolved against the working directory on fs.defaultFS
  }

  /**
   * A string an argument would mean as a path (a procedure's or a table function's): a scheme with a slash,
   * a root, a home or a parent reference. A bare word is not one: it may as well name a table.
   */
  static boolean looksLikePath(String s) {
    String k = classify(s);
    return k != null && !k.equals("relative") && !(k.equals("uri") && s.indexOf('/') < 0);
  }

  static void report(FactSink sink, String path, String context, String where, String defaultFs) {
    String kind = classify(path);
    if (kind == null) return;
    sink.fact(Fact.Kind.PATH, kind)
        .put("path", path)
        .put("scheme", effectiveScheme(path, kind, defaultFs))
        .put("context", context)
        .put("where", where)
        .emit();
  }

  /** A path the statement itself says is local ({@code LOCAL INPATH}, {@code LOCAL DIRECTORY}). */
  static void reportLocal(FactSink sink, String path, String context, String where) {
    sink.fact(Fact.Kind.PATH, "local_keyword")
        .put("path", path)
        .put("scheme", "file")
        .put("context", context)
        .put("where", where)
        .emit();
  }

  private static String effectiveScheme(String path, String kind, String defaultFs) {
    if (kind.equals("file_scheme")) return "file";
    String s = scheme(path.strip());
    if (s != null) return s.toLowerCase(Locale.ROOT);
    return defaultFs == null ? SessionView.LOCAL_FILE_SYSTEM : defaultFs;
  }

  private static boolean hasParentSegment(String p) {
    String s = p.replace('\\', '/');
    return s.equals("..") || s.startsWith("../") || s.endsWith("/..") || s.contains("/../");
  }

  private static boolean isWindowsDrive(String p) {
    return p.length() >= 2
        && Character.isLetter(p.charAt(0))
        && p.charAt(1) == ':'
        && (p.length() == 2 || p.charAt(2) == '/' || p.charAt(2) == '\\');
  }

  /** The URI scheme (letters, digits, + - . before a colon, before any slash), or null. */
  private static String scheme(String p) {
    for (int i = 0; i < p.length(); i++) {
      char c = p.charAt(i);
      if (c == ':') return i > 1 ? p.substring(0, i) : null;
      if (!(Character.isLetterOrDigit(c) || c == '+' || c == '-' || c == '.')) return null;
    }
    return null;
  }
}
