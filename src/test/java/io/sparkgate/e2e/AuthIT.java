package io.sparkgate.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.sparkgate.Sparkgate;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import io.sparkgate.proto.spark.InterruptRequest;
import io.sparkgate.proto.spark.InterruptResponse;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.ReattachExecuteRequest;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.MetricsScrape;
import io.sparkgate.tls.DevCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Date;
import java.util.Iterator;
import java.util.UUID;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Authentication end to end: the real JVM client sends its {@code token=} over TLS to Sparkgate, which
 * verifies it and stamps the principal on every request, so two users sharing a session id get separate
 * server sessions and cannot touch each other's operations.
 */
@ExtendWith(SparkServerExtension.class)
class AuthIT {
  private static final String ISSUER = "https://idp.test/realms/spark";
  private static final String AUDIENCE = "sparkgate";

  private static Sparkgate proxy;
  private static RSAKey signingKey;
  private static DevCertificates.Generated certs;
  private static Path denied;

  @BeforeAll
  static void start(SparkConnectServerProcess server) throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "e2e", "auth-" + UUID.randomUUID()));
    certs = DevCertificates.generate(dir.resolve("certs"), DevCertificates.Options.defaults());
    signingKey = new RSAKeyGenerator(2048).keyID("k1").generate();
    Files.writeString(dir.resolve("jwks.json"), new JWKSet(signingKey.toPublicJWK()).toString());
    denied = Files.writeString(dir.resolve("denied-jti.txt"), "# none yet\n");
    Path config = dir.resolve("sparkgate.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0}",
            "tls: {cert_file: certs/server.pem, key_file: certs/server.key}",
            "backend: {address: 'localhost:" + server.port() + "'}",
            "auth:",
            "  jwt:",
            "    jwks_file: jwks.json",
            "    issuer: " + ISSUER,
            "    audience: " + AUDIENCE,
            "  revocations: {denied_jti_file: denied-jti.txt}",
            "metrics: {address: 127.0.0.1, port: 0}",
            ""));
    proxy = Sparkgate.start(ProxyConfig.load(config));
    ClientTrust.useTrustStore(certs.trustStore());
  }

  @AfterAll
  static void stop() {
    if (proxy != null) {
      proxy.close();
    }
  }

  static String token(String subject) throws JOSEException {
    return token(subject, null);
  }

  static String token(String subject, String jti) throws JOSEException {
    JWTClaimsSet claims =
        new JWTClaimsSet.Builder()
            .jwtID(jti)
            .issuer(ISSUER)
            .audience(AUDIENCE)
            .subject(subject)
            .issueTime(new Date())
            .expirationTime(new Date(System.currentTimeMillis() + 600_000))
            .build();
    SignedJWT jwt =
        new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID("k1").build(), claims);
    jwt.sign(new RSASSASigner(signingKey));
    return jwt.serialize();
  }

  private static String url(String extra) {
    return "sc://localhost:" + proxy.port() + "/;use_ssl=true" + extra;
  }

  @Test
  void jwtInUrl_works() throws Exception {
    try (SparkSession spark = SparkClients.connect(url(";token=" + token("alice")))) {
      assertEquals(3L, spark.range(3).count());
    }
  }

  /**
   * A leaked token cut off by its jti in the denied file: the client holding it is refused on its next query,
   * within the file's re-read, while the same user's other token carries on; emptied, the file lets it in
   * again.
   */
  @Test
  void deniedJti_refusesThatTokenAtOnce_notTheUsersOthers() throws Exception {
    String leaked = token("jay", "jti-leaked-" + UUID.randomUUID());
    String other = token("jay", "jti-other-" + UUID.randomUUID());
    String jti = SignedJWT.parse(leaked).getJWTClaimsSet().getJWTID();
    try (SparkSession holder = SparkClients.connect(url(";token=" + leaked));
        SparkSession second = SparkClients.connect(url(";token=" + other))) {
      assertEquals(2L, holder.range(2).count());
      Files.writeString(denied, "# leaked in a ticket\n" + jti + "\n");
      Files.setLastModifiedTime(
          denied, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5_000));
      Exception refused =
          io.sparkgate.testing.Await.value(
              "the leaked token refused",
              () -> {
                try {
                  holder.range(3).count();
                  return null;
                } catch (Exception e) {
                  return e;
                }
              },
              e -> e != null);
      assertTrue(
          String.valueOf(refused.getMessage()).contains("this token was revoked"),
          refused.toString());
      assertEquals(4L, second.range(4).count(), "the user's other token still works");
      assertTrue(
          MetricsScrape.get(proxy.metricsPort())
                  .get("sparkgate_revocations_refused_total{kind=token}")
              >= 1);

      Files.writeString(denied, "# none\n");
      Files.setLastModifiedTime(
          denied, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 10_000));
      try (SparkSession again = SparkClients.connect(url(";token=" + leaked))) {
        assertEquals(
            5L,
            (long)
                io.sparkgate.testing.Await.value(
                    "the token let in again",
                    () -> {
                      try {
                        return again.range(5).count();
                      } catch (Exception e) {
                        return -1L;
                      }
                    },
                    n -> n == 5L));
      }
    }
  }

  @Test
  void noToken_refusedWithActionableMessage() {
    Exception e =
        assertThrows(Exception.class, () -> SparkClients.connectFailFast(url("")).range(1).count());
    assertTrue(
        String.valueOf(e.getMessage()).contains("no token: pass token=... in the sc:// URL"),
        e.toString());
  }

  @Test
  void badToken_refusedWithReason() throws Exception {
    String forged = token("alice");
    forged = forged.substring(0, forged.length() - 4) + (forged.endsWith("AAAA") ? "BBBB" : "AAAA");
    String bad = forged;
    String series = "sparkgate_auth_failures_total{reason=bad_signature}";
    double before = MetricsScrape.get(proxy.metricsPort()).get(series);
    Exception e =
        assertThrows(
            Exception.class,
            () -> SparkClients.connectFailFast(url(";token=" + bad)).range(1).count());
    assertTrue(e.getMessage().contains("UNAUTHENTICATED"), e.getMessage());
    assertTrue(e.getMessage().toLowerCase().contains("signature"), e.getMessage());
    // The metrics endpoint counts the refusal under its reason, and never shows the token.
    String text = MetricsScrape.text(proxy.metricsPort());
    assertTrue(MetricsScrape.parse(text).get(series) >= before + 1, text);
    assertFalse(
        text.contains(bad.substring(bad.lastIndexOf('.') + 1)),
        "no part of the token in the metrics");
    assertFalse(text.contains("alice"), "no principal in the metrics");
  }

  @Test
  void sameSessionIdTwoPrincipals_separateServerSessions_claimedUserIdIgnored() throws Exception {
    String session = UUID.randomUUID().toString();
    SparkSession bob =
        SparkClients.connect(
            url(";token=" + token("bob") + ";session_id=" + session + ";user_id=alice"));
    try (SparkSession alice =
        SparkClients.connect(url(";token=" + token("alice") + ";session_id=" + session))) {
      alice.range(5).createOrReplaceTempView("alice_private");
      assertEquals(5L, alice.table("alice_private").count());

      Exception e = assertThrows(Exception.class, () -> bob.table("alice_private").count());
      assertTrue(e.getMessage().contains("TABLE_OR_VIEW_NOT_FOUND"), e.getMessage());

      bob.close(); // ReleaseSession with alice's session id and a claimed user_id of alice (closes
      // bob's channel)
      assertEquals(5L, alice.table("alice_private").count(), "bob released alice's session");
    }
  }

  @Test
  void otherPrincipal_cannotInterruptOrReattachOperation() throws Exception {
    String session = UUID.randomUUID().toString();
    String operation = UUID.randomUUID().toString();
    ManagedChannel alice = channel(token("alice"));
    ManagedChannel bob = channel(token("bob"));
    try {
      ExecutePlanRequest longQuery =
          ExecutePlanRequest.newBuilder()
              .setSessionId(session)
              .setOperationId(operation)
              .setUserContext(UserContext.newBuilder().setUserId("alice"))
              .addRequestOptions(
                  ExecutePlanRequest.RequestOption.newBuilder()
                      .setReattachOptions(
                          io.sparkgate.proto.spark.ReattachOptions.newBuilder()
                              .setReattachable(true)))
              .setPlan(
                  Plan.newBuilder()
                      .setRoot(
                          Relation.newBuilder()
                              .setSql(
                                  SQL.newBuilder()
                                      .setQuery(
                                          "SELECT id, repeat('x', 100) AS pad FROM range(400000)"))))
              .build();
      // The shared server cuts streams after 1 MiB, so this first stream ends with the operation
      // still alive.
      String lastResponseId = null;
      Iterator<byte[]> stream =
          ClientCalls.blockingServerStreamingCall(
              alice, method("ExecutePlan"), CallOptions.DEFAULT, longQuery.toByteArray());
      while (stream.hasNext()) {
        ExecutePlanResponse r = ExecutePlanResponse.parseFrom(stream.next());
        assertFalse(r.hasResultComplete(), "the result was too small to stay alive");
        lastResponseId = r.getResponseId();
      }

      InterruptResponse interrupted =
          InterruptResponse.parseFrom(
              ClientCalls.blockingUnaryCall(
                  bob,
                  method("Interrupt"),
                  CallOptions.DEFAULT,
                  InterruptRequest.newBuilder()
                      .setSessionId(session)
                      .setUserContext(UserContext.newBuilder().setUserId("alice"))
                      .setInterruptType(InterruptRequest.InterruptType.INTERRUPT_TYPE_OPERATION_ID)
                      .setOperationId(operation)
                      .build()
                      .toByteArray()));
      assertTrue(interrupted.getInterruptedIdsList().isEmpty(), "bob interrupted " + interrupted);

      StatusRuntimeException reattach =
          assertThrows(
              StatusRuntimeException.class,
              () ->
                  ClientCalls.blockingServerStreamingCall(
                          bob,
                          method("ReattachExecute"),
                          CallOptions.DEFAULT,
                          ReattachExecuteRequest.newBuilder()
                              .setSessionId(session)
                              .setOperationId(operation)
                              .setUserContext(UserContext.newBuilder().setUserId("alice"))
                              .build()
                              .toByteArray())
                      .next());
      assertTrue(
          String.valueOf(reattach.getStatus().getDescription()).contains("INVALID_HANDLE"),
          reattach.getStatus().toString());

      // Alice's operation is intact: she reattaches and keeps reading. Each reattached stream is
      // also cut after 1 s, and on a busy machine one may end before the next batch is ready, so
      // try a few times.
      long resumedRows = 0;
      for (int attempt = 0; attempt < 20 && resumedRows == 0; attempt++) {
        Iterator<byte[]> resumed =
            ClientCalls.blockingServerStreamingCall(
                alice,
                method("ReattachExecute"),
                CallOptions.DEFAULT,
                ReattachExecuteRequest.newBuilder()
                    .setSessionId(session)
                    .setOperationId(operation)
                    .setLastResponseId(lastResponseId)
                    .setUserContext(UserContext.newBuilder().setUserId("alice"))
                    .build()
                    .toByteArray());
        while (resumed.hasNext()) {
          ExecutePlanResponse r = ExecutePlanResponse.parseFrom(resumed.next());
          resumedRows += r.getArrowBatch().getRowCount();
          lastResponseId = r.getResponseId();
        }
      }
      assertTrue(resumedRows > 0, "alice could not resume her operation");
      ClientCalls.blockingUnaryCall(
          alice,
          method("Interrupt"),
          CallOptions.DEFAULT,
          InterruptRequest.newBuilder()
              .setSessionId(session)
              .setInterruptType(InterruptRequest.InterruptType.INTERRUPT_TYPE_ALL)
              .build()
              .toByteArray());
    } finally {
      alice.shutdownNow();
      bob.shutdownNow();
    }
  }

  @Test
  void secretConfigValue_redactedInConfigGet() throws Exception {
    try (SparkSession spark = SparkClients.connect(url(";token=" + token("alice")))) {
      spark.conf().set("sparkgate.test.db.password", "hunter2");
      String value = spark.conf().get("sparkgate.test.db.password");
      assertFalse(value.contains("hunter2"), value);
      assertTrue(value.contains("redacted"), value);
      assertFalse(
          spark.conf().getAll().get("sparkgate.test.db.password").get().contains("hunter2"));
    }
  }

  private static MethodDescriptor<byte[], byte[]> method(String name) {
    return TestMethods.get(name);
  }

  private static ManagedChannel channel(String token) throws Exception {
    return Channels.tls(proxy.port(), certs.caCert())
        .intercept(Channels.bearer(token))
        .maxInboundMessageSize(128 * 1024 * 1024)
        .build();
  }
}
