package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.sparkgate.Sparkgate;
import io.sparkgate.audit.AuditVerifier;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.MetricsScrape;
import io.sparkgate.testing.SmallFilesystem;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The audit disk fills up under two proxies in front of the real Spark server: the one with
 * {@code audit.required} refuses calls with a clear UNAVAILABLE until the disk has room, the one without goes
 * on serving and counts the records as dropped; when the disk recovers both write again, and {@code audit
 * verify} shows each gap with its count and cause. The disk is a 512 KiB tmpfs the test mounts (needs root).
 */
@ExtendWith(SparkServerExtension.class)
class AuditDiskFullIT {
  /** A long query, so that the disk's last free bytes are soon used up by records. */
  private static final String SQL =
      "SELECT "
          + IntStream.range(0, 600).mapToObj(i -> "1 AS c" + i).collect(Collectors.joining(", "));

  @Test
  void fullDisk_requiredRefuses_otherCountsDropped_gapsShownAfterRecovery(
      SparkConnectServerProcess server) throws Exception {
    Path dir = ProxyConfigs.freshDir("audit-disk-full");
    Path required;
    Path optional;
    try (SmallFilesystem disk = SmallFilesystem.mount(dir.resolve("disk"), 512)) {
      required = disk.path().resolve("required").resolve("audit.jsonl");
      optional = disk.path().resolve("optional").resolve("audit.jsonl");
      try (Sparkgate strict = proxy(dir.resolve("strict"), server, required, true);
          Sparkgate lenient = proxy(dir.resolve("lenient"), server, optional, false)) {
        ManagedChannel toStrict = channel(strict.port());
        ManagedChannel toLenient = channel(lenient.port());
        try {
          assertEquals(Status.Code.OK, execute(toStrict).getCode());
          assertEquals(Status.Code.OK, execute(toLenient).getCode());
          Await.until("both records written", () -> written(strict) == 1 && written(lenient) == 1);

          disk.fill();
          // A call already admitted still runs; it is its record that cannot be written.
          assertEquals(Status.Code.OK, execute(toStrict).getCode());
          Status refused =
              Await.value("a refusal", () -> execute(toStrict), s -> s.getCode() != Status.Code.OK);
          assertEquals(Status.Code.UNAVAILABLE, refused.getCode(), refused.toString());
          assertEquals(
              "Sparkgate cannot audit calls right now; retry shortly", refused.getDescription());
          assertTrue(metric(strict, "sparkgate_audit_refused_calls_total") >= 1);
          assertEquals(
              onDisk(required), written(strict), "nothing counted as written that was not");

          // Not required: every call is served; once the records no longer fit, they count as
          // dropped.
          Await.until(
              "the lenient proxy to count a lost record",
              () -> {
                assertEquals(Status.Code.OK, execute(toLenient).getCode(), "not required: served");
                return metric(lenient, "sparkgate_audit_records_dropped_total") >= 1;
              });
          assertEquals(onDisk(optional), written(lenient));

          disk.free();
          Await.until("the strict proxy to serve again", () -> execute(toStrict).isOk());
          assertEquals(Status.Code.OK, execute(toLenient).getCode());
        } finally {
          toStrict.shutdownNow();
          toLenient.shutdownNow();
        }
      }
      assertGap(required);
      assertGap(optional);
    }
  }

  private static void assertGap(Path file) throws Exception {
    AuditVerifier.Result result = AuditVerifier.verify(List.of(file));
    assertTrue(result.ok(), result.message());
    assertEquals(1, result.gaps().size(), result.message());
    AuditVerifier.Gap gap = result.gaps().get(0);
    assertTrue(gap.recordsLost() >= 1, result.message());
    assertTrue(gap.reason().contains("No space left on device"), gap.reason());
    assertTrue(gap.seq() >= 2, "the gap follows the records written before the disk filled");
  }

  private static Sparkgate proxy(
      Path dir, SparkConnectServerProcess server, Path auditFile, boolean required)
      throws Exception {
    java.nio.file.Files.createDirectories(dir);
    return Sparkgate.start(
        ProxyConfigs.write(
            dir,
            ProxyConfigs.PLAINTEXT_LISTENER,
            ProxyConfigs.backend(server.port()),
            "auth:",
            "  anonymous: true",
            "audit: {file: '" + auditFile + "', fsync: batch, required: " + required + "}",
            "admin: {address: 127.0.0.1, port: 0}"));
  }

  /** Records in the file now (the writer has flushed what it counts as written). */
  private static double onDisk(Path file) throws Exception {
    return java.nio.file.Files.readAllLines(file).size();
  }

  private static double written(Sparkgate proxy) throws Exception {
    return metric(proxy, "sparkgate_audit_records_written_total");
  }

  private static double metric(Sparkgate proxy, String name) throws Exception {
    return MetricsScrape.get(proxy.adminPort()).getOrDefault(name, -1.0);
  }

  private static ManagedChannel channel(int port) {
    return Grpc.newChannelBuilderForAddress("127.0.0.1", port, InsecureChannelCredentials.create())
        .build();
  }

  private static Status execute(ManagedChannel channel) throws Exception {
    CompletableFuture<Status> closed = new CompletableFuture<>();
    ClientCall<byte[], byte[]> call =
        channel.newCall(
            ConnectRequests.EXECUTE_PLAN,
            CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS));
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(byte[] message) {
            call.request(1);
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            closed.complete(status);
          }
        },
        new Metadata());
    call.sendMessage(
        ConnectRequests.sqlRequest(UUID.randomUUID().toString(), "audit-disk", SQL).toByteArray());
    call.halfClose();
    call.request(1);
    return closed.get(90, TimeUnit.SECONDS);
  }
}
