package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Set;

/** What the tests of the extension grammars share: reading a statement as a backend with extensions would. */
final class ExtensionSqlTesting {

  private ExtensionSqlTesting() {}

  /** The facts ExtensionSql.read reports, checking that it reports some exactly when it says it read the text. */
  static Facts read(String sql, Set<String> extensions) {
    FactSink sink = new FactSink(100);
    boolean read =
        ExtensionSql.read(
            sql,
            extensions,
            "relation",
            "sql",
            new SqlScope(readingSession(extensions)),
            new SqlInspector(InspectorConfig.DEFAULTS),
            sink);
    Facts facts = sink.build();
    assertEquals(read, !facts.all().isEmpty(), "facts only when read: " + facts);
    return facts;
  }

  /** A session whose catalogs are prod and iceberg, loading {@code extensions}, for ExtensionSql.read alone. */
  private static SessionView readingSession(Set<String> extensions) {
    return session(Set.of("prod", "iceberg"), extensions);
  }

  /** A backend session that loads {@code extensions}, for the whole inspector. */
  static SessionView session(Set<String> extensions) {
    return session(Set.of("prod"), extensions);
  }

  private static SessionView session(Set<String> catalogs, Set<String> extensions) {
    return new SessionView.Fixed(
        "spark_catalog", "default", catalogs, null, "file", extensions, Set.of(), Set.of(), null);
  }
}
