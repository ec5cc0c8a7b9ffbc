package io.sparkgate.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.sparkgate.call.Pipeline;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.forward.ProxyRegistry;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.head.HeadStage;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ConfigResponse;
import io.sparkgate.proto.spark.KeyValue;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.redact.ConfigRedaction;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The authenticate stage + ProxyRegistry in front of a fake backend, over real (in-process) gRPC calls. */
final class AuthEndToEndTest {
  private static final MethodDescriptor<byte[], byte[]> CONFIG =
      MethodDescriptor.newBuilder(TestMethods.BYTES, TestMethods.BYTES)
          .setFullMethodName("spark.connect.SparkConnectService/Config")
          .setType(MethodDescriptor.MethodType.UNARY)
          .build();

  @TempDir Path dir;
  private final List<AutoCloseable> closers = new ArrayList<>();
  private final BlockingQueue<byte[]> backendReceived = new LinkedBlockingQueue<>();
  private AuthFixture fx;
  private Authentication auth;
  private ManagedChannel client;

  @BeforeEach
  void setUp() throws Exception {
    fx = new AuthFixture(dir);
    AuthConfig config = fx.config(AuthFixture.JWT_FILE);
    auth = Authentication.create(config, fx.time, fx.time);
    String backendName = InProcessServerBuilder.generateName();
    Server backend =
        InProcessServerBuilder.forName(backendName)
            .fallbackHandlerRegistry(
                new io.grpc.HandlerRegistry() {
                  @Override
                  public ServerMethodDefinition<?, ?> lookupMethod(String name, String authority) {
                    return name.equals(CONFIG.getFullMethodName())
                        ? ServerMethodDefinition.create(CONFIG, configHandler())
                        : null;
                  }
                })
            .directExecutor()
            .build()
            .start();
    ManagedChannel backendChannel =
        InProcessChannelBuilder.forName(backendName).directExecutor().build();
    HealthStatusManager health = new HealthStatusManager();
    String proxyName = InProcessServerBuilder.generateName();
    Server proxy =
        InProcessServerBuilder.forName(proxyName)
            .addService(health.getHealthService())
            .fallbackHandlerRegistry(
                new ProxyRegistry(
                    backendChannel,
                    null,
                    Pipeline.of(
                        auth.stage(),
                        new HeadStage(config),
                        new ConfigRedaction(new SecretPatterns(config.secretPatterns())))))
            .addTransportFilter(auth.transportFilter())
            .build()
            .start();
    client = InProcessChannelBuilder.forName(proxyName).build();
    closers.add(() -> client.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    closers.add(() -> proxy.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    closers.add(() -> backendChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    closers.add(() -> backend.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
  }

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable c : closers) {
      c.close();
    }
  }

  private ServerCallHandler<byte[], byte[]> configHandler() {
    return (ServerCall<byte[], byte[]> call, Metadata headers) -> {
      call.request(1);
      return new ServerCall.Listener<>() {
        @Override
        public void onMessage(byte[] message) {
          backendReceived.add(message);
          call.sendHeaders(new Metadata());
          call.sendMessage(
              ConfigResponse.newBuilder()
                  .addPairs(
                      KeyValue.newBuilder()
                          .setKey("spark.connect.authenticate.token")
                          .setValue("backend-secret"))
                  .build()
                  .toByteArray());
          call.close(Status.OK, new Metadata());
        }
      };
    };
  }

  private static byte[] getAll() {
    return ConfigRequest.newBuilder()
        .setSessionId("8c4f0f9e-3f0e-4d55-9b53-1a2b3c4d5e6f")
        .setUserContext(UserContext.newBuilder().setUserId("bob"))
        .setOperation(
            ConfigRequest.Operation.newBuilder().setGetAll(ConfigRequest.GetAll.newBuilder()))
        .build()
        .toByteArray();
  }

  private byte[] call(Metadata headers) {
    return ClientCalls.blockingUnaryCall(
        ClientInterceptors.intercept(client, MetadataUtils.newAttachHeadersInterceptor(headers)),
        CONFIG,
        CallOptions.DEFAULT,
        getAll());
  }

  @Test
  void grpc_validToken_backendSeesPrincipal_secretsRedacted() throws Exception {
    ConfigResponse response = ConfigResponse.parseFrom(call(AuthFixture.bearer(fx.token())));
    assertEquals(SecretPatterns.REDACTED, response.getPairs(0).getValue());
    ConfigRequest seen = ConfigRequest.parseFrom(backendReceived.poll(30, TimeUnit.SECONDS));
    assertEquals("alice", seen.getUserContext().getUserId());
    assertEquals("alice", seen.getUserContext().getUserName());
  }

  @Test
  void grpc_noToken_unauthenticated_backendNeverCalled() {
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> call(new Metadata()));
    assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode());
    assertEquals("no token: pass token=... in the sc:// URL", e.getStatus().getDescription());
    assertTrue(backendReceived.isEmpty());
    assertEquals(1L, auth.refusals().get("NO_CREDENTIALS"));
  }

  @Test
  void grpc_wrongAudience_unauthenticated_backendNeverCalled() {
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () -> call(AuthFixture.bearer(fx.token(c -> c.audience("other")))));
    assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().startsWith("wrong audience"),
        e.getStatus().getDescription());
    assertTrue(backendReceived.isEmpty());
    assertEquals(1L, auth.refusals().get("WRONG_AUDIENCE"));
  }

  @Test
  void grpc_healthWithoutToken_serving() {
    HealthCheckResponse r =
        HealthGrpc.newBlockingStub(client).check(HealthCheckRequest.newBuilder().build());
    assertEquals(HealthCheckResponse.ServingStatus.SERVING, r.getStatus());
  }
}
