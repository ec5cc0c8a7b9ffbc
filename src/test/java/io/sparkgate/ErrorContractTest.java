package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.CommonInlineUserDefinedFunction;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Expression;
import io.sparkgate.proto.spark.KeyValue;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Project;
import io.sparkgate.proto.spark.PythonUDF;
import io.sparkgate.proto.spark.Range;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Date;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The error contract every Spark Connect client relies on (docs/errors.md), through a real proxy on a real
 * socket: a policy refusal is PERMISSION_DENIED or FAILED_PRECONDITION with Spark's ErrorInfo and nothing a
 * client retries; an authentication failure is UNAUTHENTICATED, also when the JWKS endpoint is down; a quota
 * refusal is RESOURCE_EXHAUSTED with RetryInfo; a backend that is down is UNAVAILABLE. No error carries an
 * errorId (the client would ask the server for details of an error the server never saw).
 */
final class ErrorContractTest {
  private static final String SESSION = "00000000-0000-4000-8000-000000000001";
  private static final String ALICE_TOKEN = "alice-token-0123456789";
  private static final String BOB_TOKEN = "bob-token-0123456789";

  @TempDir Path dir;
  private final FakeSparkConnect fake = new FakeSparkConnect();
  private Server backend;
  private Sparkgate proxy;
  private ManagedChannel channel;
  private ManagedChannel downChannel;

  private static String sha256(String s) throws Exception {
    return HexFormat.of()
        .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
  }

  /** A port nothing listens on (bound, then released). */
  private static int deadPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @BeforeEach
  void start() throws Exception {
    // An empty message parses as any response (the proxy reads Config responses).
    fake.reply = m -> new byte[0];
    backend = NettyServerBuilder.forPort(0).fallbackHandlerRegistry(fake).build().start();
    Path policy = dir.resolve("policy.yaml");
    Files.writeString(
        policy,
        String.join(
            "\n",
            "default: allow",
            "rules:",
            "  - name: no-user-code",
            "    description: user code runs inside the server",
            "    effect: deny",
            "    when: {fact: USER_CODE}",
            "    message: 'User code ({subkind}) is not allowed here. Use built-in functions.'",
            "  - name: pinned-setting",
            "    description: this setting is fixed by the operators",
            "    effect: deny",
            "    status: failed_precondition",
            "    when: {fact: CONFIG_SET, attr: {key: spark.sql.pinned}}",
            "    message: 'spark.sql.pinned is fixed on this server. Leave it unset.'",
            ""));
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(
        file,
        String.join(
            "\n",
            "listen: {plaintext: true, address: 127.0.0.1, port: 0}",
            "pools:",
            "  main:",
            "    backends: ['127.0.0.1:" + backend.getPort() + "']",
            "  down:",
            "    backends: ['127.0.0.1:" + deadPort() + "']",
            "routes:",
            "  - {match: {authority: ['down.*']}, pool: down}",
            "  - {match: {authority: ['127.0.0.1', 'localhost']}, pool: main}",
            "health: {interval: 200ms, timeout: 500ms, session_lost_after: 60s}",
            "auth:",
            "  static_tokens:",
            "    - {sha256: " + sha256(ALICE_TOKEN) + ", principal: alice}",
            "    - {sha256: " + sha256(BOB_TOKEN) + ", principal: bob}",
            "  jwt:",
            // Nothing listens there: the JWKS endpoint is down for the whole test.
            "    jwks_url: https://127.0.0.1:" + deadPort() + "/jwks",
            "    issuer: https://idp.test",
            "    audience: sparkgate",
            "policy: {file: policy.yaml}",
            "quotas:",
            "  per_principal: {max_plan_bytes: 64KiB}",
            "  overrides:",
            "    - match: {principals: [bob]}",
            "      per_principal: {requests_per_second: 1, burst: 1}",
            ""));
    proxy = Sparkgate.start(ProxyConfig.load(file));
    channel = Channels.plaintext(proxy.port()).build();
    downChannel = Channels.plaintext(proxy.port()).overrideAuthority("down.test").build();
  }

  @AfterEach
  void stop() {
    if (channel != null) channel.shutdownNow();
    if (downChannel != null) downChannel.shutdownNow();
    if (proxy != null) proxy.close();
    backend.shutdownNow();
  }

  private static Channel withToken(Channel ch, String token) {
    Metadata md = new Metadata();
    md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return ClientInterceptors.intercept(ch, MetadataUtils.newAttachHeadersInterceptor(md));
  }

  /**
   * Whether a request holding {@code marker} reached the backend (which also gets the proxy's own profiling
   * calls, so counting calls would not do).
   */
  private boolean reached(String marker) {
    return fake.received.stream()
        .anyMatch(m -> new String(m, StandardCharsets.ISO_8859_1).contains(marker));
  }

  private static UserContext user(String name) {
    return UserContext.newBuilder().setUserId(name).build();
  }

  private static byte[] configGet(String user) {
    return ConfigRequest.newBuilder()
        .setSessionId(SESSION)
        .setUserContext(user(user))
        .setOperation(
            ConfigRequest.Operation.newBuilder()
                .setGet(ConfigRequest.Get.newBuilder().addKeys("spark.sql.shuffle.partitions")))
        .build()
        .toByteArray();
  }

  private static StatusRuntimeException unaryFails(Channel ch, String method, byte[] request) {
    return assertThrows(
        StatusRuntimeException.class,
        () ->
            ClientCalls.blockingUnaryCall(
                ch,
                TestMethods.get(method),
                CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
                request));
  }

  /** What a client reads off a failed call: the code, the ErrorInfo if any, whether RetryInfo is there. */
  private record Seen(
      Status.Code code, String message, Optional<ErrorInfo> info, boolean retryInfo) {}

  private static Seen seen(StatusRuntimeException e) {
    com.google.rpc.Status status = StatusProto.fromThrowable(e);
    Optional<ErrorInfo> info = Optional.empty();
    boolean retry = false;
    if (status != null) {
      for (Any a : status.getDetailsList()) {
        try {
          if (a.is(ErrorInfo.class)) info = Optional.of(a.unpack(ErrorInfo.class));
          if (a.is(RetryInfo.class)) retry = true;
        } catch (InvalidProtocolBufferException x) {
          throw new AssertionError(x);
        }
      }
    }
    Seen s =
        new Seen(
            e.getStatus().getCode(), String.valueOf(e.getStatus().getDescription()), info, retry);
    info.ifPresent(
        i ->
            assertFalse(
                i.getMetadataMap().containsKey("errorId"),
                "no errorId: nothing for FetchErrorDetails to find: " + i));
    return s;
  }

  @Test
  void policyRefusal_permissionDenied_sparkErrorInfo_notRetryable() {
    Relation udf =
        Relation.newBuilder()
            .setProject(
                Project.newBuilder()
                    .setInput(Relation.newBuilder().setRange(Range.newBuilder().setEnd(3)))
                    .addExpressions(
                        Expression.newBuilder()
                            .setCommonInlineUserDefinedFunction(
                                CommonInlineUserDefinedFunction.newBuilder()
                                    .setFunctionName("f")
                                    .setPythonUdf(
                                        PythonUDF.newBuilder()
                                            .setEvalType(100)
                                            .setPythonVer("3.11")
                                            .setCommand(ByteString.copyFromUtf8("pickled"))))))
            .build();
    byte[] request =
        ExecutePlanRequest.newBuilder()
            .setSessionId(SESSION)
            .setUserContext(user("alice"))
            .setOperationId("00000000-0000-4000-8000-0000000000aa")
            .setPlan(Plan.newBuilder().setRoot(udf))
            .build()
            .toByteArray();
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () -> {
              Iterator<byte[]> it =
                  ClientCalls.blockingServerStreamingCall(
                      withToken(channel, ALICE_TOKEN),
                      TestMethods.get("ExecutePlan"),
                      CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
                      request);
              it.hasNext();
            });
    Seen s = seen(e);
    assertEquals(Status.Code.PERMISSION_DENIED, s.code());
    assertTrue(s.message().contains("no-user-code"), s.message());
    ErrorInfo info = s.info().orElseThrow(() -> new AssertionError("no ErrorInfo: " + e));
    assertEquals("org.apache.spark.sql.AnalysisException", info.getReason());
    assertEquals("42501", info.getMetadataMap().get("sqlState"));
    assertFalse(s.retryInfo(), "a refusal is final: no RetryInfo");
    assertFalse(reached("pickled"), "refused before the backend");

    StatusRuntimeException pinned =
        unaryFails(
            withToken(channel, ALICE_TOKEN),
            "Config",
            ConfigRequest.newBuilder()
                .setSessionId(SESSION)
                .setOperation(
                    ConfigRequest.Operation.newBuilder()
                        .setSet(
                            ConfigRequest.Set.newBuilder()
                                .addPairs(
                                    KeyValue.newBuilder()
                                        .setKey("spark.sql.pinned")
                                        .setValue("x"))))
                .build()
                .toByteArray());
    Seen p = seen(pinned);
    assertEquals(Status.Code.FAILED_PRECONDITION, p.code());
    assertTrue(p.info().isPresent());
    assertFalse(p.retryInfo());
  }

  @Test
  void authenticationFailures_unauthenticated_evenWithTheJwksEndpointDown() throws Exception {
    Seen missing = seen(unaryFails(channel, "Config", configGet("carol")));
    assertEquals(Status.Code.UNAUTHENTICATED, missing.code());
    assertFalse(missing.retryInfo());

    Seen wrong = seen(unaryFails(withToken(channel, "not-a-token"), "Config", configGet("carol")));
    assertEquals(Status.Code.UNAUTHENTICATED, wrong.code());
    assertFalse(wrong.retryInfo());

    // A well-formed JWT: the keys to check it cannot be fetched. Still UNAUTHENTICATED, never
    // UNAVAILABLE, which every client would retry for ten minutes.
    RSAKey key = new RSAKeyGenerator(2048).keyID("k1").generate();
    SignedJWT jwt =
        new SignedJWT(
            new JWSHeader.Builder(JWSAlgorithm.RS256).keyID("k1").build(),
            new JWTClaimsSet.Builder()
                .issuer("https://idp.test")
                .audience("sparkgate")
                .subject("carol")
                .expirationTime(new Date(System.currentTimeMillis() + 600_000))
                .build());
    jwt.sign(new RSASSASigner(key));
    Seen jwks = seen(unaryFails(withToken(channel, jwt.serialize()), "Config", configGet("carol")));
    assertEquals(Status.Code.UNAUTHENTICATED, jwks.code());
    assertNotEquals(Status.Code.UNAVAILABLE, jwks.code());
    assertFalse(jwks.retryInfo());
    assertFalse(reached("carol"), "nothing unauthenticated reaches the backend");
  }

  @Test
  void quotaRefusals_resourceExhausted_withRetryInfo_exceptAnOversizedPlan() throws Exception {
    Channel bob = withToken(channel, BOB_TOKEN);
    // One request a second, burst 1: of a few sent at once, one passes and the next is refused.
    StatusRuntimeException refused =
        Await.value(
            "a request over bob's rate",
            () -> {
              try {
                ClientCalls.blockingUnaryCall(
                    bob,
                    TestMethods.get("Config"),
                    CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
                    configGet("bob"));
                return null;
              } catch (StatusRuntimeException e) {
                return e;
              }
            },
            e -> e != null);
    Seen s = seen(refused);
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.code());
    assertTrue(s.message().contains("SPARKGATE_QUOTA_EXCEEDED"), s.message());
    assertTrue(s.info().isPresent());
    assertTrue(s.retryInfo(), "a client that reads RetryInfo waits and retries");

    // 54000: the request itself is over the limit, waiting will not help, so no RetryInfo.
    byte[] big =
        ConfigRequest.newBuilder()
            .setSessionId(SESSION)
            .setOperation(
                ConfigRequest.Operation.newBuilder()
                    .setGet(ConfigRequest.Get.newBuilder().addKeys("k".repeat(100_000))))
            .build()
            .toByteArray();
    Seen tooBig = seen(unaryFails(withToken(channel, ALICE_TOKEN), "Config", big));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, tooBig.code());
    assertEquals("54000", tooBig.info().orElseThrow().getMetadataMap().get("sqlState"));
    assertFalse(tooBig.retryInfo());
  }

  @Test
  void backendDown_unavailable_andRetryInfoOnceKnownDown() throws Exception {
    Channel alice = withToken(downChannel, ALICE_TOKEN);
    Seen first = seen(unaryFails(alice, "Config", configGet("alice")));
    assertEquals(Status.Code.UNAVAILABLE, first.code());
    // Once the health checks have marked it down, the proxy answers itself, in Spark's shape.
    Seen known =
        Await.value(
            "the proxy's own answer for a backend known to be down",
            Duration.ofSeconds(30),
            () -> seen(unaryFails(alice, "Config", configGet("alice"))),
            x -> x.info().isPresent(),
            () -> "");
    assertEquals(Status.Code.UNAVAILABLE, known.code());
    assertTrue(known.retryInfo(), known.toString());
    assertTrue(known.message().contains("SPARKGATE_"), known.message());
  }
}
