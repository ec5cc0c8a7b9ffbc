package io.sparkgate.policy;

import io.sparkgate.config.SecretPatterns;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.SecretValues;
import io.sparkgate.inspect.SqlRedaction;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A compact, audit-safe summary of what one call asked for, built from its facts: statement and request
 * kinds, tables read and written, SQL text and expression strings (literals redacted unless asked for),
 * user-code kinds, artifacts (name, size, SHA-256), config keys (never values), data sources, paths (without
 * credentials), anything unclassified, and whether the plan arrived compressed. One per call;
 * messages of a stream add to it. Not thread-safe (the request side of a call is serialized).
 */
final class PlanSummary {
  private static final int MAX_SQL = 4096;
  private static final int MAX_ITEMS = 100;

  private final boolean includeLiterals;
  private final Set<String> kinds = new LinkedHashSet<>();
  private final Set<String> sql = new LinkedHashSet<>();
  private final Set<String> expressions = new LinkedHashSet<>();
  private final Set<String> paths = new LinkedHashSet<>();
  private final Set<String> read = new LinkedHashSet<>();
  private final Set<String> written = new LinkedHashSet<>();
  private final Set<String> userCode = new LinkedHashSet<>();
  private final List<Map<String, String>> artifacts = new ArrayList<>();
  private final Set<String> configKeys = new LinkedHashSet<>();
  private final Set<String> dataSources = new LinkedHashSet<>();
  private final Set<String> functions = new LinkedHashSet<>();
  private final Set<String> unclassified = new LinkedHashSet<>();
  private boolean compressed;

  /** Values of secret settings the facts added so far set: never recorded, wherever a text holds them. */
  private final List<String> secretValues = new ArrayList<>();

  private final SecretPatterns secrets;

  PlanSummary(boolean includeLiterals, SecretPatterns secrets) {
    this.includeLiterals = includeLiterals;
    this.secrets = secrets;
  }

  PlanSummary add(Facts facts) {
    secretValues.addAll(SecretValues.in(facts, secrets));
    for (Fact f : facts.all()) {
      switch (f.kind()) {
        case REQUEST -> add(kinds, "rpc:" + f.subkind());
        case SQL -> {
          add(kinds, "sql:" + f.subkind());
          addText(sql, f.get("sql"));
        }
        case EXPRESSION -> addText(expressions, f.get("text"));
        case TABLE_READ -> add(read, f.get("table"));
        case TABLE_WRITE -> add(written, f.get("table"));
        case TIME_TRAVEL ->
            add(
                read,
                f.get("table") + " (" + f.subkind().toLowerCase(java.util.Locale.ROOT) + " as of)");
        case USER_CODE -> add(userCode, f.subkind());
        case ARTIFACT -> {
          if ((f.subkind().equals("batch") || f.subkind().equals("complete"))
              && artifacts.size() < MAX_ITEMS) {
            Map<String, String> a = new LinkedHashMap<>();
            a.put("name", f.get("name"));
            a.put("size", f.get("size"));
            a.put("sha256", f.get("sha256"));
            artifacts.add(a);
          }
        }
        case CONFIG_SET, CONFIG_UNSET -> add(configKeys, f.get("key"));
        case DATA_SOURCE -> add(dataSources, f.subkind() + ":" + f.get("format"));
        case FUNCTION_CALL -> add(functions, f.get("name"));
        case PATH -> {
          add(kinds, "path:" + f.subkind());
          add(paths, withoutUserInfo(f.get("path")));
        }
        case ADD_RESOURCE, CREATE_FUNCTION_USING, EXECUTE_IMMEDIATE, CATALOG_OP, EXTENSION ->
            add(kinds, f.kind().name().toLowerCase(java.util.Locale.ROOT) + ":" + f.subkind());
        case UNCLASSIFIED -> add(unclassified, f.subkind());
        case COMPRESSED_PLAN -> compressed = true;
      }
    }
    return this;
  }

  /** SQL or an expression string, literals redacted unless asked for, cut at {@link #MAX_SQL}. */
  private void addText(Set<String> set, String text) {
    if (text == null) return;
    String shown =
        SecretValues.cut(includeLiterals ? text : SqlRedaction.redactLiterals(text), secretValues);
    add(
        set,
        shown.length() > MAX_SQL
            ? shown.substring(0, MAX_SQL) + "...(" + shown.length() + " chars)"
            : shown);
  }

  /** A URI's user information ({@code s3a://key:secret@bucket/...}) is a credential: never recorded. */
  static String withoutUserInfo(String path) {
    if (path == null) return null;
    int scheme = path.indexOf("://");
    if (scheme < 0) return path;
    int start = scheme + 3;
    int slash = path.indexOf('/', start);
    int at = path.lastIndexOf('@', slash < 0 ? path.length() - 1 : slash);
    return at < start ? path : path.substring(0, start) + "***@" + path.substring(at + 1);
  }

  private static void add(Set<String> set, String v) {
    if (v != null && set.size() < MAX_ITEMS) set.add(v);
  }

  /** The summary as the audit record's {@code plan_summary}; empty parts are left out. */
  Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    put(m, "kinds", kinds);
    put(m, "sql", sql);
    put(m, "expressions", expressions);
    put(m, "tables_read", read);
    put(m, "tables_written", written);
    put(m, "user_code", userCode);
    if (!artifacts.isEmpty()) m.put("artifacts", List.copyOf(artifacts));
    put(m, "config_keys", configKeys);
    put(m, "data_sources", dataSources);
    put(m, "paths", paths);
    put(m, "functions", functions);
    put(m, "unclassified", unclassified);
    // Whether the client sent the plan compressed (Spark 4.1+), which no other part shows.
    if (compressed) m.put("compressed", true);
    return m;
  }

  private static void put(Map<String, Object> m, String key, Set<String> values) {
    if (!values.isEmpty()) m.put(key, List.copyOf(values));
  }
}
