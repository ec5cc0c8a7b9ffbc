package io.sparkgate.compat;

import java.util.Locale;
import java.util.Optional;

/**
 * What the compatibility suite asks every client to do through the proxy. The client programs (Python, Go,
 * JVM) know each by its {@link #id()}; a refusal scenario names the shipped policy's rule that must refuse
 * it, and the client must show that rule and its remedy.
 */
enum Scenario {
  VERSION(null),
  RANGE(null),
  SQL(null),
  CREATE_DATAFRAME(null),
  /** A result large enough that the client reattaches (ReattachExecute) to finish reading it. */
  LARGE_RESULT(null),
  INTERRUPT(null),
  /** A Spark error (e.g. division by zero under ANSI mode) arrives with its error class and SQLSTATE. */
  RICH_ERROR(null),
  PYTHON_UDF("no-user-code"),
  PANDAS_UDF("no-user-code"),
  UDTF("no-user-code"),
  PYTHON_DATA_SOURCE("no-user-code"),
  MAP_IN_PANDAS("no-user-code"),
  FOREACH_BATCH("no-user-code"),
  ADD_ARTIFACT("no-artifacts"),
  REFLECT("no-reflection"),
  LOCAL_FILE_READ("paths-allowlist"),
  CONF_SET("config-allowlist");

  private final String rule;

  Scenario(String rule) {
    this.rule = rule;
  }

  /** The name the client programs use: {@code large_result}, {@code python_udf}, ... */
  String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The rule of policies/shared-server.yaml that must refuse it; empty for scenarios that must work. */
  Optional<String> refusedBy() {
    return Optional.ofNullable(rule);
  }

  static Scenario byId(String id) {
    return valueOf(id.toUpperCase(Locale.ROOT));
  }
}
