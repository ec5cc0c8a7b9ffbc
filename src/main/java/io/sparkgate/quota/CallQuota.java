package io.sparkgate.quota;

import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Answers;
import io.sparkgate.call.Call;
import io.sparkgate.call.SparkError;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.inspect.RequestHead;
import io.sparkgate.proto.spark.InterruptRequest;
import io.sparkgate.proto.spark.ReleaseExecuteRequest;
import java.util.EnumMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The quotas of one call with limits: its request messages' size, a token at its first message, and for an
 * ExecutePlan (or a ReattachExecute) the operation's slot from its start until the operation is over.
 * Quotas protect fairness, not safety: should this code fail, the call goes through.
 */
final class CallQuota implements CallHook {
  private static final Logger log = LoggerFactory.getLogger(CallQuota.class);

  private final Call call;
  private final Budget budget;
  private final String principal;
  private final String tenant; // null without one
  private final Ledger ledger;
  private final EnumMap<Quota, LongAdder> refusals;

  private boolean admitted; // request side only

  /** The operation whose slot this call holds, or null. */
  private volatile Op op;

  /** The operation ends with this call whatever its status: not reattachable, or its id made by the server. */
  private volatile boolean endsWithCall;

  CallQuota(
      Call call,
      Budget budget,
      String principal,
      String tenant,
      Ledger ledger,
      EnumMap<Quota, LongAdder> refusals) {
    this.call = call;
    this.budget = budget;
    this.principal = principal;
    this.tenant = tenant;
    this.ledger = ledger;
    this.refusals = refusals;
  }

  @Override
  public byte[] onRequest(byte[] message) throws StatusException {
    try {
      if (budget.maxPlanBytes() > 0 && message.length > budget.maxPlanBytes()) {
        throw new QuotaExceeded(
            Quota.PRINCIPAL_PLAN_BYTES, budget.maxPlanBytes(), principal, -1, message.length);
      }
      if (!admitted) {
        admitted = true;
        admit();
      }
    } catch (QuotaExceeded e) {
      throw refuse(e);
    } catch (RuntimeException e) {
      log.error("{}: quota check failed; letting the call through", call.method(), e);
    }
    return message;
  }

  private void admit() throws QuotaExceeded {
    RequestHead head = call.head();
    switch (call.method()) {
      case "ExecutePlan" -> {
        String operation = head.operationId();
        endsWithCall =
            budget.countsOperations(tenant != null)
                && (operation.isEmpty() || !head.reattachable());
        op = ledger.start(budget, principal, tenant, head.sessionId(), operation);
      }
      case "ReattachExecute" -> {
        ledger.takeTokens(budget, principal, tenant, true);
        op = ledger.reattach(budget, principal, tenant, head.sessionId(), head.operationId());
      }
      // Calls that end work may borrow: a client at its rate can still end what it started.
      case "ReleaseExecute", "ReleaseSession", "Interrupt" ->
          ledger.takeTokens(budget, principal, tenant, true);
      default -> ledger.takeTokens(budget, principal, tenant, false);
    }
  }

  @Override
  public void onAccepted(byte[] forwarded) {
    if (!budget.countsOperations(tenant != null)) return;
    try {
      RequestHead head = call.head();
      switch (call.method()) {
        case "ReleaseExecute" -> {
          if (head.release() == ReleaseExecuteRequest.ReleaseCase.RELEASE_ALL) {
            ledger.releaseOperation(principal, tenant, head.sessionId(), head.operationId());
          }
        }
        case "Interrupt" -> {
          InterruptRequest.InterruptType type = head.interrupt();
          if (type == InterruptRequest.InterruptType.INTERRUPT_TYPE_OPERATION_ID) {
            ledger.releaseOperation(principal, tenant, head.sessionId(), head.operationId());
          } else if (type == InterruptRequest.InterruptType.INTERRUPT_TYPE_ALL) {
            ledger.releaseSession(principal, tenant, head.sessionId());
          }
          // By tag: this replica does not know the operations' tags. Each one's stream ends with
          // its error, or its lease runs out.
        }
        case "ReleaseSession" -> ledger.releaseSession(principal, tenant, head.sessionId());
        default -> {}
      }
    } catch (RuntimeException e) {
      log.error("{}: releasing quota slots failed; their lease will", call.method(), e);
    }
  }

  @Override
  public Payload onResponse(Payload message) {
    Op held = op;
    if (held != null && !held.released() && Answers.resultComplete(message)) {
      ledger.release(held); // every result was sent: the operation is done
    }
    return message;
  }

  @Override
  public void onClose(Status status) {
    Op held = op;
    if (held == null) return;
    try {
      ledger.streamEnded(held, endsWithCall || failed(status));
    } catch (RuntimeException e) {
      log.error("{}: ending a quota slot failed; its lease will", call.method(), e);
    }
  }

  /**
   * Whether the operation failed with its stream. A stream cancelled (the client went, or reattaches) or cut
   * (UNAVAILABLE: a network failure the client retries by reattaching) says nothing of the operation, and
   * neither does a stream the server closed because a reattach replaced it: a reattachable operation runs
   * on, and keeps its slot until its lease runs out unless a reattach renews it.
   */
  static boolean failed(Status status) {
    return switch (status.getCode()) {
      case OK, CANCELLED, UNAVAILABLE -> false;
      default -> {
        String d = status.getDescription();
        yield d == null || !d.startsWith("[INVALID_CURSOR.");
      }
    };
  }

  private StatusException refuse(QuotaExceeded e) {
    refusals.get(e.quota()).increment();
    SparkError error = e.error();
    call.audit().quota(e.quota().label());
    call.audit().refusal(error.text());
    log.debug("{} refused for {}: {}", call.method(), principal, error.message());
    return error.toException();
  }
}
