package io.sparkgate.inspect;

import java.util.Locale;

/**
 * Which paths reach the server's local filesystem: a {@code file:} scheme, no scheme at all with an absolute
 * path (Hadoop resolves it against fs.defaultFS, which is the local filesystem on most single-node servers),
 * a {@code ..} segment anywhere, or a relative path without a scheme (the server's working directory). Plain string checks; the only question is "is there a scheme".
 */
final class LocalPaths {
  private LocalPaths() {}

  /** The PATH subkind for this path, or null if it is not local. */
  static String classify(String path) {
    if (path == null) return null;
    String p = path.strip();
    if (p.isEmpty()) return null;
    String lower = p.toLowerCase(Locale.ROOT);
    if (lower.startsWith("file:") || lower.startsWith("local:")) return "file_scheme";
    if (hasParentSegment(p)) return "parent_ref";
    if (scheme(p) == null && (p.startsWith("/") || p.startsWith("\\") || p.startsWith("~") || isWindowsDrive(p))) {
      return "absolute";
    }
    // No scheme and relative: resolved against the server process's working directory on fs.defaultFS.
    if (scheme(p) == null) return "relative";
    return null;
  }

  static void report(FactSink sink, String path, String context, String where) {
    String kind = classify(path);
    if (kind != null) sink.fact(Fact.Kind.PATH, kind).put("path", path).put("context", context).put("where", where).emit();
  }

  private static boolean hasParentSegment(String p) {
    String s = p.replace('\\', '/');
    return s.equals("..") || s.startsWith("../") || s.endsWith("/..") || s.contains("/../");
  }

  private static boolean isWindowsDrive(String p) {
    return p.length() >= 2 && Character.isLetter(p.charAt(0)) && p.charAt(1) == ':'
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
