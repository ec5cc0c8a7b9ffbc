package io.sparkgate.lakehouse;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.SessionView;
import java.util.List;
import java.util.Set;

/**
 * Whether a backend loads both the Hudi and the Iceberg session extensions, and which SQL time-travel facts
 * then land on Iceberg tables (the ones Spark cannot run on such a server).
 */
public final class MixedTableFormats {
  public static final String HUDI_EXTENSION =
      "org.apache.spark.sql.hudi.HoodieSparkSessionExtension";
  public static final String ICEBERG_EXTENSION =
      "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions";

  /**
   * Iceberg's catalog implementations. SparkSessionCatalog also serves non-Iceberg tables; a table in it is
   * treated as Iceberg (a rewrite of a non-Iceberg table then fails on the server as "table not found",
   * never with a silently different result).
   */
  public static final Set<String> ICEBERG_CATALOGS =
      Set.of(
          "org.apache.iceberg.spark.SparkCatalog", "org.apache.iceberg.spark.SparkSessionCatalog");

  private MixedTableFormats() {}

  /** True if the backend loads both extensions: the time-travel rule is active only then. */
  public static boolean isMixed(BackendProfile profile) {
    return profile.hasExtension(HUDI_EXTENSION) && profile.hasExtension(ICEBERG_EXTENSION);
  }

  /** True if {@code catalog} is configured with an Iceberg implementation (spark_catalog matches any case). */
  public static boolean isIcebergCatalog(BackendProfile profile, String catalog) {
    if (catalog == null) return false;
    String impl = profile.catalogs().get(catalog);
    if (impl == null && SessionView.SESSION_CATALOG.equalsIgnoreCase(catalog)) {
      for (var e : profile.catalogs().entrySet()) {
        if (SessionView.SESSION_CATALOG.equalsIgnoreCase(e.getKey())) impl = e.getValue();
      }
    }
    return impl != null && ICEBERG_CATALOGS.contains(impl.strip());
  }

  /** True for a TIME_TRAVEL fact from SQL text on a table in an Iceberg catalog of a mixed backend. */
  public static boolean isBlocked(Fact fact, BackendProfile profile) {
    return fact.kind() == Fact.Kind.TIME_TRAVEL
        && "sql".equals(fact.get("source"))
        && isMixed(profile)
        && isIcebergCatalog(profile, fact.get("catalog"));
  }

  /** The facts of a request that the rule is about, in order; empty when the rule is inactive. */
  public static List<Fact> blocked(Facts facts, BackendProfile profile) {
    if (!isMixed(profile)) return List.of();
    return facts.ofKind(Fact.Kind.TIME_TRAVEL).stream().filter(f -> isBlocked(f, profile)).toList();
  }
}
