package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.rpc.ErrorInfo;
import io.sparkgate.Sparkgate;
import io.sparkgate.audit.AuditVerifier;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import io.sparkgate.testing.AuditLines;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.DebianPackages;
import io.sparkgate.tls.DevCertificates;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A client on gRPC's C core (Python grpcio, the transport under PySpark) through Sparkgate with TLS, a token and
 * the shipped policy, to a real Spark Connect 4.0 server: the JVM tests all use grpc-java, and PySpark itself
 * cannot be installed here. This covers what PySpark's connection depends on below PySpark: the C core's TLS
 * and ALPN against the proxy's, its HPACK, the {@code authorization} header, a streamed result, and a refusal
 * whose {@code grpc-status-details-bin} carries the ErrorInfo PySpark turns into an AnalysisException.
 *
 * <p>Needs {@code python3} with the {@code grpc} module (Debian: python3-grpcio, which {@code .ci/setup}
 * installs). Without it the test is skipped, unless {@code SPARKGATE_CI=1} (set by {@code .ci/run}), which
 * makes it a failure.
 */
@ExtendWith(SparkServerExtension.class)
class GrpcCoreClientIT {
  private static final String TOKEN = "grpc-core-it-" + UUID.randomUUID();
  private static final Path SCRIPT =
      Path.of("src", "test", "python", "grpc_core_client.py").toAbsolutePath();
  private static final ObjectMapper JSON = new ObjectMapper();

  private static Path dir;
  private static Path auditFile;
  private static DevCertificates.Generated certs;
  private static Sparkgate proxy;
  private static String python;

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    python =
        DebianPackages.require(
            "python3-grpcio",
            "python3 with the grpc module, gRPC's C core",
            () ->
                DebianPackages.firstWorking(
                    List.of("/usr/bin/python3", "python3"), "-c", "import grpc"));
    dir = ProxyConfigs.freshDir("grpc-core");
    auditFile = dir.resolve("audit.jsonl");
    certs = DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    String sha =
        HexFormat.of()
            .formatHex(
                MessageDigest.getInstance("SHA-256")
                    .digest(TOKEN.getBytes(StandardCharsets.UTF_8)));
    proxy =
        Sparkgate.start(
            ProxyConfigs.write(
                dir,
                "listen: {address: 127.0.0.1, port: 0}",
                "tls: {cert_file: certs/server.pem, key_file: certs/server.key}",
                ProxyConfigs.backend(server.port()),
                "auth:",
                "  static_tokens:",
                "    - {sha256: " + sha + ", principal: py-user, groups: [analysts]}",
                ProxyConfigs.policy("shared-server.yaml"),
                "audit: {file: audit.jsonl}"));
  }

  @AfterAll
  static void stop() throws Exception {
    ProxyConfigs.closeAll(proxy);
    if (auditFile != null && Files.exists(auditFile)) {
      AuditVerifier.Result chain = AuditVerifier.verify(List.of(auditFile));
      assertTrue(chain.ok(), chain.message());
    }
  }

  @Test
  void resultsStreamAndRefusalsCarrySparksErrorDetails_overTheCCoresTls() throws Exception {
    String session = UUID.randomUUID().toString();
    List<JsonNode> results =
        run(
            TOKEN,
            // The client claims another user: the proxy stamps the token's principal instead.
            ConnectRequests.sqlRequest(
                    session, "mallory", "SELECT id, id * 2 AS twice FROM range(3)")
                .toByteArray(),
            ConnectRequests.sqlRequest(
                    session, "mallory", "SELECT reflect('java.lang.System', 'getenv')")
                .toByteArray());

    JsonNode ok = results.get(0);
    assertEquals("OK", ok.path("code").asText(), ok.toString());
    List<List<Object>> rows = new ArrayList<>();
    for (JsonNode b64 : ok.path("responses")) {
      ExecutePlanResponse response =
          ExecutePlanResponse.parseFrom(Base64.getDecoder().decode(b64.asText()));
      assertEquals(session, response.getSessionId());
      if (response.hasArrowBatch()) {
        rows.addAll(ConnectRequests.decode(response.getArrowBatch().getData().toByteArray()));
      }
    }
    assertEquals(List.of(List.of(0L, 0L), List.of(1L, 2L), List.of(2L, 4L)), rows);

    JsonNode refused = results.get(1);
    assertEquals("PERMISSION_DENIED", refused.path("code").asText(), refused.toString());
    assertTrue(
        refused
            .path("details")
            .asText()
            .contains("[SPARKGATE_POLICY_DENIED] Sparkgate policy rule 'no-reflection'"),
        refused.toString());
    com.google.rpc.Status status =
        com.google.rpc.Status.parseFrom(
            Base64.getDecoder()
                .decode(refused.path("trailers").path("grpc-status-details-bin").asText()));
    ErrorInfo info = status.getDetails(0).unpack(ErrorInfo.class);
    assertEquals("org.apache.spark.sql.AnalysisException", info.getReason());
    assertEquals("42501", info.getMetadataOrThrow("sqlState"));

    List<JsonNode> records = awaitRecords(session, 2);
    for (JsonNode r : records) {
      assertEquals("py-user", r.path("principal").asText(), r.toString());
      assertFalse(r.toString().contains(TOKEN), "the token reached the audit log");
    }
    assertEquals(
        List.of("allow", "deny"),
        records.stream().map(r -> r.path("decision").asText()).sorted().toList());
  }

  @Test
  void noToken_refusedWithAnActionableMessage() throws Exception {
    JsonNode r =
        run(
                null,
                ConnectRequests.sqlRequest(UUID.randomUUID().toString(), "u", "SELECT 1")
                    .toByteArray())
            .get(0);
    assertEquals("UNAUTHENTICATED", r.path("code").asText(), r.toString());
    assertTrue(r.path("details").asText().contains("no token"), r.toString());
  }

  /** Runs the Python client on these requests; one result per request. */
  private static List<JsonNode> run(String token, byte[]... requests) throws Exception {
    Path work = Files.createDirectories(dir.resolve("run-" + UUID.randomUUID()));
    List<String> files = new ArrayList<>();
    for (int i = 0; i < requests.length; i++) {
      files.add(Files.write(work.resolve("request-" + i + ".bin"), requests[i]).toString());
    }
    Path out = work.resolve("result.json");
    Map<String, Object> job = new java.util.LinkedHashMap<>();
    job.put("target", "localhost:" + proxy.port());
    job.put("ca", certs.caCert().toString());
    job.put("token", token);
    job.put("requests", files);
    job.put("out", out.toString());
    Path jobFile = work.resolve("job.json");
    JSON.writeValue(jobFile.toFile(), job);
    Path log = work.resolve("client.log");
    Process p =
        new ProcessBuilder(python, SCRIPT.toString(), jobFile.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!p.waitFor(180, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail("the Python client did not finish: " + Files.readString(log));
    }
    assertEquals(0, p.exitValue(), "the Python client failed: " + Files.readString(log));
    List<JsonNode> results = new ArrayList<>();
    JSON.readTree(out.toFile()).path("results").forEach(results::add);
    assertEquals(requests.length, results.size());
    return results;
  }

  /** The ExecutePlan audit records of this session, once {@code count} of them are in the file. */
  private static List<JsonNode> awaitRecords(String session, int count) throws Exception {
    List<JsonNode> found =
        Await.value(
            count + " ExecutePlan audit records of session " + session,
            () -> {
              List<JsonNode> records = new ArrayList<>();
              for (String line : AuditLines.complete(auditFile)) {
                JsonNode r = JSON.readTree(line);
                if (session.equals(r.path("session_id").asText())
                    && "ExecutePlan".equals(r.path("rpc").asText())) {
                  records.add(r);
                }
              }
              return records;
            },
            records -> records.size() >= count);
    assertEquals(count, found.size(), "audit records of session " + session);
    return found;
  }
}
