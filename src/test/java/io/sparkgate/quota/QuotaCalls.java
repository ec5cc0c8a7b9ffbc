package io.sparkgate.quota;

import com.google.protobuf.ByteString;
import io.grpc.Attributes;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.Pipeline;
import io.sparkgate.call.Principal;
import io.sparkgate.config.MatchConfig;
import io.sparkgate.config.QuotasConfig;
import io.sparkgate.config.QuotasConfig.Limits;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.forward.ProxyRegistry;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import io.sparkgate.proto.spark.InterruptRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.ReattachExecuteRequest;
import io.sparkgate.proto.spark.ReattachOptions;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.ReleaseExecuteRequest;
import io.sparkgate.proto.spark.ReleaseSessionRequest;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.Principals;
import io.sparkgate.testing.TestStages;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.UUID;

/**
 * Calls as the proxy's pipeline makes them (the inspect stage reads the request head, then the quota stage),
 * and the Spark Connect messages that start, continue and end operations, for the quota tests.
 */
final class QuotaCalls {

  private QuotaCalls() {}

  static Principal principal(String name, String tenant, String... groups) {
    return Principals.principal(name, tenant, groups);
  }

  /** Limits; 0 leaves one unset. */
  static Limits limits(int operations, int rate, int burst, long planBytes) {
    return new Limits(
        operations > 0 ? OptionalInt.of(operations) : OptionalInt.empty(),
        rate > 0 ? OptionalInt.of(rate) : OptionalInt.empty(),
        burst > 0 ? OptionalInt.of(burst) : OptionalInt.empty(),
        planBytes > 0 ? OptionalLong.of(planBytes) : OptionalLong.empty());
  }

  static QuotasConfig quotas(Limits perPrincipal, Limits perTenant, Duration lease) {
    return new QuotasConfig(perPrincipal, perTenant, List.of(), lease);
  }

  static QuotasConfig.OverrideLimits override(
      MatchConfig match, Limits perPrincipal, Limits perTenant) {
    return new QuotasConfig.OverrideLimits(match, perPrincipal, perTenant);
  }

  /** One call through the head and {@code stage}. */
  record Open(Call call, CallHook hook) {
    /** Sends one request message; the refusal, if any, is thrown. */
    Open send(byte[] message) throws StatusException {
      byte[] forwarded = hook.onRequest(message);
      hook.onAccepted(forwarded);
      return this;
    }

    Open respond(byte[] response) {
      hook.onResponse(Payload.of(response));
      return this;
    }

    void close(Status status) {
      hook.onClose(status);
    }

    /** Sends {@code message}; a refusal closes the call with its status (as the forwarding layer does). */
    StatusException refused(byte[] message) {
      try {
        send(message);
      } catch (StatusException e) {
        hook.onClose(e.getStatus());
        return e;
      }
      return null;
    }
  }

  static Open open(QuotaStage stage, String method, Principal who) throws StatusException {
    return open(stage, method, who, (String) null);
  }

  /** @param authority the host the client dialled, as the proxy's transport passes it; null: unknown */
  static Open open(QuotaStage stage, String method, Principal who, String authority)
      throws StatusException {
    Call call = call(method, who, authority);
    return new Open(call, Pipeline.of(TestStages.unstampedHead(), stage).open(call));
  }

  /** A call of {@code who}'s, dialled to {@code authority} (null: unknown), before any stage saw it. */
  static Call call(String method, Principal who, String authority) {
    Attributes transport =
        authority == null
            ? Attributes.EMPTY
            : Attributes.newBuilder().set(ProxyRegistry.AUTHORITY, authority).build();
    Call call = new Call(method, new Metadata(), transport);
    call.principal(who);
    return call;
  }

  static String uuid() {
    return UUID.randomUUID().toString();
  }

  private static UserContext user(Principal who) {
    return UserContext.newBuilder().setUserId(who.name()).build();
  }

  static byte[] execute(Principal who, String session, String operation, boolean reattachable) {
    ExecutePlanRequest.Builder b =
        ExecutePlanRequest.newBuilder()
            .setSessionId(session)
            .setUserContext(user(who))
            .setPlan(
                Plan.newBuilder()
                    .setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery("SELECT 1"))));
    if (operation != null) b.setOperationId(operation);
    if (reattachable) {
      b.addRequestOptions(
          ExecutePlanRequest.RequestOption.newBuilder()
              .setReattachOptions(ReattachOptions.newBuilder().setReattachable(true)));
    }
    return b.build().toByteArray();
  }

  static byte[] reattach(Principal who, String session, String operation) {
    return ReattachExecuteRequest.newBuilder()
        .setSessionId(session)
        .setUserContext(user(who))
        .setOperationId(operation)
        .build()
        .toByteArray();
  }

  static byte[] releaseAll(Principal who, String session, String operation) {
    return ReleaseExecuteRequest.newBuilder()
        .setSessionId(session)
        .setUserContext(user(who))
        .setOperationId(operation)
        .setReleaseAll(ReleaseExecuteRequest.ReleaseAll.getDefaultInstance())
        .build()
        .toByteArray();
  }

  static byte[] releaseUntil(Principal who, String session, String operation) {
    return ReleaseExecuteRequest.newBuilder()
        .setSessionId(session)
        .setUserContext(user(who))
        .setOperationId(operation)
        .setReleaseUntil(
            ReleaseExecuteRequest.ReleaseUntil.newBuilder().setResponseId(uuid()).build())
        .build()
        .toByteArray();
  }

  static byte[] interruptOperation(Principal who, String session, String operation) {
    return InterruptRequest.newBuilder()
        .setSessionId(session)
        .setUserContext(user(who))
        .setInterruptType(InterruptRequest.InterruptType.INTERRUPT_TYPE_OPERATION_ID)
        .setOperationId(operation)
        .build()
        .toByteArray();
  }

  static byte[] interruptAll(Principal who, String session) {
    return InterruptRequest.newBuilder()
        .setSessionId(session)
        .setUserContext(user(who))
        .setInterruptType(InterruptRequest.InterruptType.INTERRUPT_TYPE_ALL)
        .build()
        .toByteArray();
  }

  static byte[] interruptTag(Principal who, String session, String tag) {
    return InterruptRequest.newBuilder()
        .setSessionId(session)
        .setUserContext(user(who))
        .setInterruptType(InterruptRequest.InterruptType.INTERRUPT_TYPE_TAG)
        .setOperationTag(tag)
        .build()
        .toByteArray();
  }

  static byte[] releaseSession(Principal who, String session) {
    return ReleaseSessionRequest.newBuilder()
        .setSessionId(session)
        .setUserContext(user(who))
        .build()
        .toByteArray();
  }

  static byte[] configRequest(Principal who, String session) {
    return ConfigRequest.newBuilder()
        .setSessionId(session)
        .setUserContext(user(who))
        .setOperation(
            ConfigRequest.Operation.newBuilder()
                .setGetAll(ConfigRequest.GetAll.getDefaultInstance()))
        .build()
        .toByteArray();
  }

  /** A result batch, as most responses of an operation are. */
  static byte[] batch(String session, String operation) {
    return ExecutePlanResponse.newBuilder()
        .setSessionId(session)
        .setOperationId(operation)
        .setResponseId(uuid())
        .setArrowBatch(
            ExecutePlanResponse.ArrowBatch.newBuilder()
                .setRowCount(1000)
                .setData(ByteString.copyFrom(new byte[4096])))
        .build()
        .toByteArray();
  }

  /** The last response of a reattachable operation: every result was sent. */
  static byte[] resultComplete(String session, String operation) {
    return ExecutePlanResponse.newBuilder()
        .setSessionId(session)
        .setServerSideSessionId(uuid())
        .setOperationId(operation)
        .setResponseId(uuid())
        .setResultComplete(ExecutePlanResponse.ResultComplete.getDefaultInstance())
        .build()
        .toByteArray();
  }
}
