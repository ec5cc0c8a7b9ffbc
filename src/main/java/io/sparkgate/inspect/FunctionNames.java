package io.sparkgate.inspect;

import java.util.List;
import java.util.Locale;

/**
 * Function names as Spark resolves them (FunctionResolution, Spark 4.0): parts from Spark's own identifier
 * grammar (so backticks, comments and padding are gone), lower-cased as the function registry does, and the
 * qualifiers {@code builtin} / {@code system.builtin} (the built-in registry) and {@code session} /
 * {@code system.session} (temporary functions) told apart from catalog functions. A FUNCTION_CALL fact carries
 * {@code name} (the last part), {@code qualified}, {@code namespace} (empty, builtin, session or catalog) and
 * {@code session_function} (true when the name is a temporary SQL function this session created).
 */
final class FunctionNames {
  private FunctionNames() {}

  static FactSink.Builder fact(
      FactSink sink, String subkind, List<String> parts, SessionView session) {
    String name = parts.get(parts.size() - 1).toLowerCase(Locale.ROOT);
    String namespace = namespace(parts);
    boolean sessionFunction =
        (namespace.isEmpty() || namespace.equals("session")) && session.isSessionFunction(name);
    return sink.fact(Fact.Kind.FUNCTION_CALL, subkind)
        .put("name", name)
        .put("qualified", String.join(".", parts).toLowerCase(Locale.ROOT))
        .put("namespace", namespace)
        .put("session_function", sessionFunction ? "true" : null);
  }

  private static String namespace(List<String> parts) {
    if (parts.size() == 1) return "";
    String q = String.join(".", parts.subList(0, parts.size() - 1)).toLowerCase(Locale.ROOT);
    return switch (q) {
      case "builtin", "system.builtin" -> "builtin";
      case "session", "system.session" -> "session";
      default -> "catalog";
    };
  }
}
