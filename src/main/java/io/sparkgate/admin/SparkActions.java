package io.sparkgate.admin;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import io.sparkgate.proto.spark.InterruptRequest;
import io.sparkgate.proto.spark.InterruptResponse;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.ReleaseSessionRequest;
import io.sparkgate.proto.spark.ReleaseSessionResponse;
import io.sparkgate.proto.spark.SQL;
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

  private static final MethodDescriptor<ExecutePlanRequest, ExecutePlanResponse> EXECUTE =
      MethodDescriptor.<ExecutePlanRequest, ExecutePlanResponse>newBuilder()
          .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
          .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "ExecutePlan"))
          .setRequestMarshaller(ProtoUtils.marshaller(ExecutePlanRequest.getDefaultInstance()))
          .setResponseMarshaller(ProtoUtils.marshaller(ExecutePlanResponse.getDefaultInstance()))
          .build();

  private SparkActions() {}

  /**
   * Runs {@code sql} to its end in a session of its own as {@code userId}, then releases the session: what
   * makes a new server's first real query as fast as on one that has run queries (its session state, planner
   * and code paths warmed up).
   *
   * @throws io.grpc.StatusRuntimeException when the backend cannot be asked, refuses, or the query fails
   */
  public static void warmUp(Channel backend, String userId, String sql, long timeoutMillis) {
    String session = java.util.UUID.randomUUID().toString();
    UserContext user = UserContext.newBuilder().setUserId(userId).build();
    var responses =
        ClientCalls.blockingServerStreamingCall(
            backend,
            EXECUTE,
            CallOptions.DEFAULT.withDeadlineAfter(timeoutMillis, TimeUnit.MILLISECONDS),
            ExecutePlanRequest.newBuilder()
                .setSessionId(session)
                .setUserContext(user)
                .setClientType(CLIENT_TYPE)
                .setPlan(
                    Plan.newBuilder()
                        .setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery(sql))))
                .build());
    while (responses.hasNext()) responses.next();
    release(backend, userId, session);
  }

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
