package io.sparkgate.limits;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.rpc.RetryInfo;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.sparkgate.config.LimitsConfig;
import io.sparkgate.forward.TestMethods;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The buffered-bytes limit: while the proxy holds {@code max_buffered_bytes} a new call is refused with
 * RESOURCE_EXHAUSTED and a RetryInfo, and served again once the bytes drain. (OverloadTest proves the call
 * limit through a real proxy; buffered bytes are held there only for as long as a message takes to pass, too
 * briefly to pile up on purpose, so here the held count is set.)
 */
final class CallLimiterTest {
  private static final MethodDescriptor<byte[], byte[]> UNARY = TestMethods.get("ArtifactStatus");
  private final AtomicLong held = new AtomicLong();
  private Server server;
  private ManagedChannel channel;

  private void start(LimitsConfig limits) throws Exception {
    String name = InProcessServerBuilder.generateName();
    ServerServiceDefinition echo =
        ServerServiceDefinition.builder(UNARY.getServiceName())
            .addMethod(
                UNARY,
                ServerCalls.asyncUnaryCall(
                    (byte[] req, io.grpc.stub.StreamObserver<byte[]> out) -> {
                      out.onNext(req);
                      out.onCompleted();
                    }))
            .build();
    server =
        InProcessServerBuilder.forName(name)
            .addService(ServerInterceptors.intercept(echo, new CallLimiter(limits, held::get)))
            .build()
            .start();
    channel = InProcessChannelBuilder.forName(name).build();
  }

  @AfterEach
  void stop() {
    channel.shutdownNow();
    server.shutdownNow();
  }

  @Test
  void bufferedBytesAtTheLimit_newCallsRefused_servedOnceDrained() throws Exception {
    LimitsConfig d = LimitsConfig.defaults();
    start(
        new LimitsConfig(
            d.maxConnections(),
            d.maxConnectionsPerAddress(),
            d.maxCalls(),
            1024 * 1024,
            d.maxHeaderBytes(),
            d.maxStreamResets(),
            d.streamResetWindow()));
    held.set(1024 * 1024);
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                ClientCalls.blockingUnaryCall(channel, UNARY, CallOptions.DEFAULT, new byte[] {7}));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().contains("limits.max_buffered_bytes"), e.getMessage());
    assertTrue(
        StatusProto.fromThrowable(e).getDetailsList().stream().anyMatch(a -> a.is(RetryInfo.class)),
        "no RetryInfo");
    held.set(1024 * 1024 - 1);
    assertArrayEquals(
        new byte[] {7},
        ClientCalls.blockingUnaryCall(channel, UNARY, CallOptions.DEFAULT, new byte[] {7}));
  }

  @Test
  void callSlots_releasedWhenCallsEnd() throws Exception {
    LimitsConfig d = LimitsConfig.defaults();
    CallLimiter limiter =
        new CallLimiter(
            new LimitsConfig(
                d.maxConnections(),
                d.maxConnectionsPerAddress(),
                1,
                d.maxBufferedBytes(),
                d.maxHeaderBytes(),
                d.maxStreamResets(),
                Duration.ofSeconds(10)),
            held::get);
    String name = InProcessServerBuilder.generateName();
    server =
        InProcessServerBuilder.forName(name)
            .addService(
                ServerInterceptors.intercept(
                    ServerServiceDefinition.builder(UNARY.getServiceName())
                        .addMethod(
                            UNARY,
                            ServerCalls.asyncUnaryCall(
                                (byte[] req, io.grpc.stub.StreamObserver<byte[]> out) -> {
                                  out.onNext(req);
                                  out.onCompleted();
                                }))
                        .build(),
                    limiter))
            .build()
            .start();
    channel = InProcessChannelBuilder.forName(name).build();
    // One slot: calls one after another all pass, so each one's slot was given back.
    for (int i = 0; i < 20; i++) {
      ClientCalls.blockingUnaryCall(channel, UNARY, CallOptions.DEFAULT, new byte[] {1});
    }
    assertEquals(0, limiter.active());
    assertEquals(0, limiter.refused(CallLimiter.Limit.MAX_CALLS));
  }
}
