package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.ArtifactStatusesRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Range;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.testing.FakeSparkConnect;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The proxy as operators run it (java -jar target/sparkgate.jar serve), stopped with SIGTERM under load:
 * every call a client saw complete has exactly one audit record, no record is invented, and the chain verifies.
 */
final class AuditShutdownIT {
  private static final int CLIENTS = 8;

  @Test
  void sigtermUnderLoad_recordsEqualCompletedCalls_chainIntact() throws Exception {
    FakeSparkConnect backend = new FakeSparkConnect();
    backend.streamCount =
        50; // streams in flight when SIGTERM lands must finish within the grace period
    Server backendServer = backend.serve();
    Path dir =
        Files.createDirectories(Path.of("target", "it", "audit-shutdown-" + UUID.randomUUID()));
    Path audit = dir.resolve("audit.jsonl");
    int port = freePort();
    Path config = dir.resolve("sparkgate.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: "
                + port
                + ", plaintext: true, shutdown_grace: 20s}",
            "backend: {address: '127.0.0.1:" + backendServer.getPort() + "'}",
            "audit: {file: audit.jsonl, fsync: batch, max_file_size: 64KiB}",
            "auth: {anonymous: true}",
            ""));
    Process proxy =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                Path.of("target", "sparkgate.jar").toString(),
                "serve",
                "--config",
                config.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("proxy.log").toFile())
            .start();
    Set<String> completed = ConcurrentHashMap.newKeySet();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
    ManagedChannel channel = null;
    try {
      awaitPort(port, proxy);
      channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
      ManagedChannel ch = channel;
      for (int c = 0; c < CLIENTS; c++) {
        boolean streaming = c % 2 == 0;
        clients.submit(
            () -> {
              while (!stop.get()) {
                String session = UUID.randomUUID().toString();
                try {
                  if (streaming) {
                    Iterator<byte[]> it =
                        ClientCalls.blockingServerStreamingCall(
                            ch,
                            TestMethods.get("ExecutePlan"),
                            CallOptions.DEFAULT,
                            ExecutePlanRequest.newBuilder()
                                .setSessionId(session)
                                // A request without a plan is refused as unreadable.
                                .setPlan(
                                    Plan.newBuilder()
                                        .setRoot(
                                            Relation.newBuilder()
                                                .setRange(Range.newBuilder().setEnd(1))))
                                .build()
                                .toByteArray());
                    it.forEachRemaining(b -> {});
                  } else {
                    ClientCalls.blockingUnaryCall(
                        ch,
                        TestMethods.get("ArtifactStatus"),
                        CallOptions.DEFAULT,
                        ArtifactStatusesRequest.newBuilder()
                            .setSessionId(session)
                            .build()
                            .toByteArray());
                  }
                  completed.add(session);
                } catch (StatusRuntimeException e) {
                  if (proxy.isAlive() && !stop.get()) {
                    continue; // a refused call while still running would show up as a missing
                    // record
                  }
                  return; // the proxy is gone or going: this client is done
                }
              }
            });
      }
      // At least 3 s of load, and more while a cold proxy on a busy machine is still getting going.
      Thread.sleep(3000);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (completed.size() <= 50 && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
      assertTrue(completed.size() > 50, "load did not get going: " + completed.size());
      proxy.destroy(); // SIGTERM
      assertTrue(proxy.waitFor(60, TimeUnit.SECONDS), "proxy did not stop after SIGTERM");
      stop.set(true);
      clients.shutdown();
      assertTrue(clients.awaitTermination(30, TimeUnit.SECONDS));
    } finally {
      stop.set(true);
      clients.shutdownNow();
      if (channel != null) {
        channel.shutdownNow();
      }
      proxy.destroyForcibly();
      backendServer.shutdownNow();
    }

    List<Path> files = new ArrayList<>(new AuditFiles(audit).rotated());
    if (Files.exists(audit)) {
      files.add(audit);
    }
    AuditVerifier.Result result = AuditVerifier.verify(files);
    assertTrue(result.ok(), result.message());
    Set<String> recorded = new HashSet<>();
    Set<String> recordedOk = new HashSet<>();
    ObjectMapper json = new ObjectMapper();
    for (Path file : files) {
      try (var reader = AuditFiles.open(file)) {
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
          var r = json.readTree(line);
          recorded.add(r.path("session_id").asText());
          if ("OK".equals(r.path("status").asText())) {
            recordedOk.add(r.path("session_id").asText());
          }
        }
      }
    }
    assertEquals(result.records(), recorded.size(), "one record per call");
    assertEquals(
        completed,
        recordedOk,
        "records of completed calls differ from the calls clients saw complete");
    assertEquals(completed.size(), recorded.size(), "records of calls no client saw complete");
  }

  private static int freePort() throws IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static void awaitPort(int port, Process proxy) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (!proxy.isAlive()) {
        throw new AssertionError("proxy exited with " + proxy.exitValue());
      }
      try (Socket s = new Socket("127.0.0.1", port)) {
        return;
      } catch (IOException notYet) {
        Thread.sleep(100);
      }
    }
    throw new AssertionError("proxy did not listen on " + port);
  }
}
