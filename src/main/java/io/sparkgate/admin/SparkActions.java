package io.sparkgate.admin;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.sparkgate.proto.spark.InterruptRequest;
import io.sparkgate.proto.spark.InterruptResponse;
import io.sparkgate.proto.spark.ReleaseSessionRequest;
import io.sparkgate.proto.spark.ReleaseSessionResponse;
import io.sparkgate.proto.spark.UserContext;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What an operator asks a backend to do, over Spark Connect itself and as the session's own user (the
 * {@code user_id} the proxy stamps on the session's calls), so the server acts on that session only. The
 * channel carries the backend's token when it has one.
 */
public final class SparkActions {
  private static final String SERVICE = "spark.connect.SparkConnectService";
  private static final String CLIENT_TYPE = "sparkgate-admin";
  private static final long DEADLINE_SECONDS = 10;

  private static final MethodDescriptor<InterruptRequest, InterruptResponse> INTERRUPT =
      unary(
          "Interrupt",
          InterruptRequest.getDefaultInstance(),
          InterruptResponse.getDefaultInstance());
  private static final MethodDescriptor<ReleaseSessionRequest, ReleaseSessionResponse> RELEASE =
      unary(
          "ReleaseSession",
          ReleaseSessionRequest.getDefaultInstance(),
          ReleaseSessionResponse.getDefaultInstance());

  private SparkActions() {}

  private static <Q extends com.google.protobuf.Message, A extends com.google.protobuf.Message>
      MethodDescriptor<Q, A> unary(String method, Q request, A response) {
    return MethodDescriptor.<Q, A>newBuilder()
        .setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, method))
        .setRequestMarshaller(ProtoUtils.marshaller(request))
        .setResponseMarshaller(ProtoUtils.marshaller(response))
        .build();
  }

  /**
   * Interrupts one operation, or every operation of the session when {@code operationId} is null: the ids the
   * server says it interrupted (empty when none was running).
   *
   * @throws io.grpc.StatusRuntimeException when the backend cannot be asked or refuses
   */
  static List<String> interrupt(
      Channel backend, String userId, String sessionId, String operationId) {
    InterruptRequest.Builder request =
        InterruptRequest.newBuilder()
            .setSessionId(sessionId)
            .setUserContext(UserContext.newBuilder().setUserId(userId))
            .setClientType(CLIENT_TYPE);
    if (operationId == null) {
      request.setInterruptType(InterruptRequest.InterruptType.INTERRUPT_TYPE_ALL);
    } else {
      request
          .setInterruptType(InterruptRequest.InterruptType.INTERRUPT_TYPE_OPERATION_ID)
          .setOperationId(operationId);
    }
    InterruptResponse r =
        ClientCalls.blockingUnaryCall(backend, INTERRUPT, options(), request.build());
    return r.getInterruptedIdsList();
  }

  /**
   * Releases a session: the server interrupts its operations and drops its state.
   *
   * @throws io.grpc.StatusRuntimeException when the backend cannot be asked or refuses
   */
  public static void release(Channel backend, String userId, String sessionId) {
    ClientCalls.blockingUnaryCall(
        backend,
        RELEASE,
        options(),
        ReleaseSessionRequest.newBuilder()
            .setSessionId(sessionId)
            .setUserContext(UserContext.newBuilder().setUserId(userId))
            .setClientType(CLIENT_TYPE)
            .build());
  }

  private static CallOptions options() {
    return CallOptions.DEFAULT.withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
  }
}
