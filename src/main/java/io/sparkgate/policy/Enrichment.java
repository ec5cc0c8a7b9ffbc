package io.sparkgate.policy;

import io.sparkgate.config.SecretPatterns;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.SessionView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Adds what the backend profile knows to the inspector's facts before evaluation: table facts (TABLE_READ,
 * TABLE_WRITE, TIME_TRAVEL) get {@code catalog_impl}, the implementation class of the table's catalog
 * ({@code builtin} for an unconfigured session catalog, {@code unknown} while the profile is not known), so a
 * rule can say "time travel on a table whose catalog is org.apache.iceberg.spark.SparkCatalog". CONFIG_READ
 * facts get {@code secret} ({@code true} when the key matches {@code auth.secret_patterns}), so a rule can
 * refuse reading secret settings with {@code SET <key>}.
 */
final class Enrichment {
  static final String BUILTIN = "builtin";
  static final String UNKNOWN = "unknown";

  private Enrichment() {}

  static Facts enrich(Facts facts, BackendProfile profile, SecretPatterns secrets) {
    List<Fact> out = new ArrayList<>(facts.size());
    boolean changed = false;
    for (Fact f : facts.all()) {
      if (f.kind() == Fact.Kind.TABLE_READ
          || f.kind() == Fact.Kind.TABLE_WRITE
          || f.kind() == Fact.Kind.TIME_TRAVEL) {
        Map<String, String> attrs = new HashMap<>(f.attrs());
        attrs.put("catalog_impl", catalogImpl(f.get("catalog"), profile));
        out.add(new Fact(f.kind(), f.subkind(), attrs));
        changed = true;
      } else if (f.kind() == Fact.Kind.CONFIG_READ && f.get("key") != null) {
        Map<String, String> attrs = new HashMap<>(f.attrs());
        attrs.put("secret", Boolean.toString(secrets.isSecret(f.get("key"))));
        out.add(new Fact(f.kind(), f.subkind(), attrs));
        changed = true;
      } else {
        out.add(f);
      }
    }
    return changed ? Facts.of(out) : facts;
  }

  static String catalogImpl(String catalog, BackendProfile profile) {
    if (profile == null) return UNKNOWN;
    if (catalog == null || catalog.isEmpty()) catalog = profile.defaultCatalog();
    String impl = profile.catalogs().get(catalog);
    if (impl == null && SessionView.SESSION_CATALOG.equalsIgnoreCase(catalog)) {
      impl = profile.catalogs().get(SessionView.SESSION_CATALOG);
      if (impl == null) return BUILTIN;
    }
    return impl == null ? UNKNOWN : impl;
  }
}
