package io.sparkgate.lakehouse;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.SessionView;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Backend profiles and sessions for the lakehouse tests, shaped like the real servers'. */
final class Profiles {
  private Profiles() {}

  static final String HOODIE_CATALOG = "org.apache.spark.sql.hudi.catalog.HoodieCatalog";
  static final String ICEBERG_CATALOG = "org.apache.iceberg.spark.SparkCatalog";

  /** Spark 3.5.7 + Hudi 1.2.0 + Iceberg 1.10.0, as the reference recipe configures it. */
  static final BackendProfile MIXED =
      new BackendProfile(
          "3.5.7",
          List.of(MixedTableFormats.ICEBERG_EXTENSION, MixedTableFormats.HUDI_EXTENSION),
          Map.of("spark_catalog", HOODIE_CATALOG, "iceberg", ICEBERG_CATALOG),
          null);

  static final BackendProfile ICEBERG_ONLY =
      new BackendProfile(
          "4.0.0",
          List.of(MixedTableFormats.ICEBERG_EXTENSION),
          Map.of("iceberg", ICEBERG_CATALOG),
          null);

  static SessionView session(String timeZone) {
    return new SessionView.Fixed(
        "spark_catalog", "default", Set.of("spark_catalog", "iceberg"), timeZone);
  }

  static SessionView inIcebergLake(String timeZone) {
    return new SessionView.Fixed("iceberg", "lake", Set.of("spark_catalog", "iceberg"), timeZone);
  }
}
