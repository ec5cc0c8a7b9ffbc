package io.sparkgate.lakehouse;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.inspect.BackendProfile;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

final class MixedTableFormatsTest {

  @Test
  void mixedOnlyWithBothExtensions() {
    assertTrue(MixedTableFormats.isMixed(Profiles.MIXED));
    assertFalse(MixedTableFormats.isMixed(Profiles.ICEBERG_ONLY));
    assertFalse(MixedTableFormats.isMixed(BackendProfile.UNKNOWN));
    assertFalse(
        MixedTableFormats.isMixed(
            new BackendProfile(
                "3.5.7", List.of(MixedTableFormats.HUDI_EXTENSION), Map.of(), null)));
  }

  @Test
  void icebergCatalogsByImplementation() {
    assertTrue(MixedTableFormats.isIcebergCatalog(Profiles.MIXED, "iceberg"));
    assertFalse(MixedTableFormats.isIcebergCatalog(Profiles.MIXED, "spark_catalog"));
    assertFalse(MixedTableFormats.isIcebergCatalog(Profiles.MIXED, "unknown"));
    BackendProfile sessionCatalog =
        new BackendProfile(
            "3.5.7",
            List.of(),
            Map.of("spark_catalog", "org.apache.iceberg.spark.SparkSessionCatalog"),
            null);
    assertTrue(MixedTableFormats.isIcebergCatalog(sessionCatalog, "SPARK_CATALOG"));
  }
}
