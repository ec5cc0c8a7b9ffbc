package io.sparkgate.grants;

import io.sparkgate.call.Principal;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.testing.YamlText;
import io.sparkgate.yaml.YamlNode;
import java.io.StringReader;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Whether a grant whose {@code to:} names these principals, groups and tenants lets a principal read a table,
 * asked of a {@code data_access} section read by the real {@link DataAccessReader}, for other packages' tests.
 */
public final class GrantProbe {
  private GrantProbe() {}

  public static boolean takes(
      List<String> principals, List<String> groups, List<String> tenants, Principal who) {
    StringBuilder to = new StringBuilder();
    key(to, "principals", principals);
    key(to, "groups", groups);
    key(to, "tenants", tenants);
    String text =
        "default: deny\n"
            + "grants:\n"
            + "  - name: probe\n"
            + "    to: {"
            + to
            + "}\n"
            + "    tables: [\"spark_catalog.db.*\"]\n"
            + "    privileges: [select]\n";
    DataAccess grants =
        DataAccessReader.read(
            YamlNode.parse("probe.yaml", new StringReader(text), IllegalArgumentException::new),
            Set.of());
    Fact read =
        new Fact(
            Fact.Kind.TABLE_READ,
            "sql",
            Map.of("catalog", "spark_catalog", "database", "db", "name", "t", "where", "sql"));
    return grants
        .check(who.name(), who.groups(), who.tenant(), Accesses.of(Facts.of(List.of(read))))
        .allowed();
  }

  private static void key(StringBuilder out, String key, List<String> globs) {
    if (globs.isEmpty()) return;
    if (out.length() > 0) out.append(", ");
    out.append(key).append(": ").append(YamlText.flowList(globs));
  }
}
