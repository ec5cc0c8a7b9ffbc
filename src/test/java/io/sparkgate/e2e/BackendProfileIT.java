package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.BackendProfiler;
import io.sparkgate.lakehouse.MixedTableFormats;
import io.sparkgate.testing.Channels;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The backend profile read over Spark Connect from the real servers matches how they were configured. */
@ExtendWith({MixedLakehouseServerExtension.class, SparkServerExtension.class})
class BackendProfileIT {

  private static BackendProfile read(int port) throws InterruptedException {
    ManagedChannel channel = Channels.plaintext(port).build();
    try {
      return new BackendProfiler(channel, "sparkgate-profiler", 30_000).read();
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void mixedSpark357HudiIcebergServer(MixedLakehouseServerExtension.MixedServer server)
      throws Exception {
    BackendProfile profile = read(server.process().port());
    System.out.println("mixed 3.5.7 profile: " + profile);
    assertEquals("3.5.7", profile.sparkVersion());
    assertEquals(
        List.of(
            MixedLakehouseServerExtension.ICEBERG_EXTENSION,
            MixedLakehouseServerExtension.HUDI_EXTENSION),
        profile.extensions());
    assertEquals(
        Map.of(
            "spark_catalog", server.conf().get("spark.sql.catalog.spark_catalog"),
            "iceberg", server.conf().get("spark.sql.catalog.iceberg")),
        profile.catalogs());
    assertEquals("spark_catalog", profile.defaultCatalog());
    assertTrue(MixedTableFormats.isMixed(profile));
    assertTrue(MixedTableFormats.isIcebergCatalog(profile, "iceberg"));
    assertFalse(MixedTableFormats.isIcebergCatalog(profile, "spark_catalog"));
  }

  @Test
  void icebergOnlySpark400Server(SparkConnectServerProcess server) throws Exception {
    BackendProfile profile = read(server.port());
    System.out.println("Iceberg-only 4.0.0 profile: " + profile);
    assertEquals("4.0.0", profile.sparkVersion());
    assertEquals(
        List.of("org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"),
        profile.extensions());
    assertEquals(Map.of("iceberg", "org.apache.iceberg.spark.SparkCatalog"), profile.catalogs());
    assertEquals("spark_catalog", profile.defaultCatalog());
    assertFalse(MixedTableFormats.isMixed(profile));
  }
}
