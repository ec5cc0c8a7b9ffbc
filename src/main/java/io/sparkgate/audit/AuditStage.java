package io.sparkgate.audit;

import com.google.protobuf.Descriptors.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.AuditEvent;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.call.Route;
import io.sparkgate.call.Stage;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import io.sparkgate.inspect.RequestHead;
import io.sparkgate.proto.spark.Base;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit stage, around all the others: one audit record for every Spark Connect call, written when the call
 * ends, whatever ended it (the backend's answer, a refusal by any stage, authentication included, or the
 * client going away). Opened first, it counts what the client sent and what it was sent; the record reads
 * the rest from the {@link Call} the other stages filled. With {@code audit.required}, calls are refused while
 * the log cannot take records.
 */
public final class AuditStage implements Stage {
  private static final Logger log = LoggerFactory.getLogger(AuditStage.class);
  private static final Set<String> RESPONSE_FIELDS =
      Set.of("server_side_session_id", "operation_id");
  private static final String SQLSTATE = "SQLSTATE: ";

  private final AuditLog auditLog;
  private final Clock clock;
  private final Map<String, WireScanner> responseScanners = new HashMap<>();
  private final AtomicLong refusedUnaudited = new AtomicLong();

  public AuditStage(AuditLog auditLog, Clock clock) {
    this.auditLog = auditLog;
    this.clock = clock;
    for (MethodDescriptor method :
        Base.getDescriptor().findServiceByName("SparkConnectService").getMethods()) {
      // ExecutePlan's and ReattachExecute's responses carry the result batches whose rows are
      // counted.
      boolean countsRows =
          method.getName().equals("ExecutePlan") || method.getName().equals("ReattachExecute");
      responseScanners.put(
          method.getName(),
          new WireScanner(method.getOutputType(), RESPONSE_FIELDS, "response_", countsRows));
    }
  }

  /** Calls refused because the audit log could not take their record ({@code audit.required}). */
  public long refusedUnaudited() {
    return refusedUnaudited.get();
  }

  @Override
  public CallHook open(Call call) throws StatusException {
    WireScanner responseScanner = responseScanners.get(call.method());
    if (responseScanner == null) {
      return CallHook.PASS_THROUGH; // a method the proxy does not know is not a Spark Connect call
    }
    if (auditLog.config().required() && !auditLog.accepting()) {
      refusedUnaudited.incrementAndGet();
      log.warn(
          "refusing {}: the audit log is not accepting records and audit.required is true",
          call.method());
      throw Status.UNAVAILABLE
          .withDescription("Sparkgate cannot audit calls right now; retry shortly")
          .asException();
    }
    return new Audited(call, responseScanner);
  }

  /**
   * One call being audited: counts what passes, and queues the record once at the end. The record itself
   * (formatting, the request's hash, the request id) is built by the audit writer from this object, after
   * the call's last response has left: none of it is on the path of a call.
   */
  private final class Audited implements CallHook {
    /** A first request message up to this size is hashed by the writer; larger ones at once. */
    private static final int DEFERRED_REQUEST_BYTES = 64 * 1024;

    /** A later response's row count follows its session id (a UUID): well within its first bytes. */
    private static final int ROW_COUNT_BYTES = 256;

    private final Call call;
    private final WireScanner responseScanner;
    private final Instant started = clock.instant();
    private final long startNanos = System.nanoTime();
    private final AtomicBoolean recorded = new AtomicBoolean();
    // Each count has one writer at a time: gRPC delivers requests one after another, and a call's
    // sends must not overlap. Volatile, not atomic, is then enough for close() (on either side) to
    // read them.
    private volatile long bytesIn;
    private volatile long messagesIn;
    private volatile long bytesOut;
    private volatile long messagesOut;
    private volatile long rows;

    /** The first response's fields, for the record. */
    private final Map<String, Object> responseFields = new HashMap<>(4);

    /** Reads the first response: the record's response fields, and its rows. */
    private final Payload.Reader<Long> firstResponse;

    /** The first request message, kept for the writer to hash (see DEFERRED_REQUEST_BYTES); else null. */
    private volatile byte[] firstRequest;

    private volatile String firstRequestHash;

    Audited(Call call, WireScanner responseScanner) {
      this.call = call;
      this.responseScanner = responseScanner;
      this.firstResponse =
          in ->
              responseScanner.scan(
                  in,
                  (k, v) -> {
                    synchronized (responseFields) {
                      responseFields.putIfAbsent(k, v);
                    }
                  });
    }

    @Override
    public byte[] onRequest(byte[] message) {
      bytesIn += message.length;
      if (messagesIn++ == 0) {
        if (message.length <= DEFERRED_REQUEST_BYTES) {
          firstRequest =
              message; // request arrays are never modified: stages that rewrite make new ones
        } else {
          firstRequestHash = HashChain.sha256Hex(message); // not held for the length of the call
        }
      }
      return message;
    }

    @Override
    public Payload onResponse(Payload payload) {
      bytesOut += payload.length();
      long sent = messagesOut++;
      try {
        if (sent == 0) {
          rows += payload.read(firstResponse);
        } else if (responseScanner.countsRows()) {
          Long counted = payload.readHead(ROW_COUNT_BYTES, responseScanner.rowsOnly());
          rows += counted == null ? 0 : counted;
        }
      } catch (IOException e) {
        // Only a bug in the transport's buffers could get here; the record keeps what it has.
        log.warn("audit could not read a response of {}", call.method(), e);
      }
      return payload;
    }

    @Override
    public void onClose(Status status) {
      if (!recorded.compareAndSet(false, true)) {
        return;
      }
      // What stages learn after the call ended is not part of its record.
      Ended ended =
          new Ended(
              status,
              System.nanoTime() - startNanos,
              firstRequest,
              firstRequestHash,
              bytesIn,
              bytesOut,
              messagesIn,
              messagesOut,
              rows,
              call.principal(),
              call.head(),
              call.decided(),
              call.route(),
              call.audit().seal());
      if (!auditLog.write(() -> buildRecord(ended))) {
        log.error("audit record dropped (queue full): rpc={} started={}", call.method(), started);
      }
    }

    /** The record, on the audit writer's thread. */
    private Map<String, Object> buildRecord(Ended ended) {
      Map<String, Object> record = AuditLog.newRecord();
      record.put("time", started.toString());
      record.put("request_id", UUID.randomUUID().toString());
      record.put("rpc", call.method());
      putIfSet(record, "trace_id", call.audit().traceId());
      if (call.remoteAddress() != null) {
        record.put("client_address", call.remoteAddress().toString());
      }
      head(ended.head(), record);
      if (ended.firstRequest() != null) {
        record.put("request_sha256", HashChain.sha256Hex(ended.firstRequest()));
      } else if (ended.firstRequestHash() != null) {
        record.put("request_sha256", ended.firstRequestHash());
      }
      principal(ended.principal(), record);
      AuditEvent.Sealed event = ended.event();
      putIfSet(record, "auth_failure", event.authFailure());
      if (ended.route() != null) {
        record.put("pool", ended.route().pool());
        record.put("backend", ended.route().backend());
      }
      if (ended.decided() != null) {
        putIfSet(record, "decision", ended.decided().effect());
        putIfSet(record, "rule", ended.decided().rule());
      }
      putIfSet(record, "refusal", event.refusal());
      putIfSet(record, "quota", event.quota());
      putList(record, "shadow_decisions", event.shadowDecisions());
      putList(record, "audit_rules", event.auditRules());
      if (!event.rewrites().isEmpty()) {
        record.put(
            "rewrites",
            event.rewrites().stream()
                .map(r -> Map.of("rule", r.rule(), "rewriter", r.rewriter(), "change", r.change()))
                .toList());
      }
      if (!event.data().isEmpty()) {
        record.put("data_access", event.data().stream().map(AuditStage::dataUse).toList());
      }
      if (event.opa() != null) record.put("opa", opa(event.opa()));
      Supplier<Map<String, Object>> summary = event.planSummary();
      if (summary != null) {
        record.put("plan_summary", summary.get());
      }
      synchronized (responseFields) {
        record.putAll(responseFields);
      }
      Status status = ended.status();
      record.put("status", status.getCode().name());
      if (status.getDescription() != null && !status.isOk()) {
        record.put("status_message", statusMessage(status.getDescription()));
      }
      record.put("duration_ms", TimeUnit.NANOSECONDS.toMillis(ended.durationNanos()));
      record.put("bytes_in", ended.bytesIn());
      record.put("bytes_out", ended.bytesOut());
      record.put("messages_in", ended.messagesIn());
      record.put("messages_out", ended.messagesOut());
      if (responseScanner.countsRows()) {
        record.put("result_rows", ended.rows());
      }
      return record;
    }
  }

  /** OPA's answer: {@code decision_id} joins OPA's decision log. */
  private static Map<String, Object> opa(AuditEvent.Opa o) {
    Map<String, Object> m = new LinkedHashMap<>();
    putIfSet(m, "decision_id", o.decisionId());
    m.put("result", o.result());
    putIfSet(m, "rule", o.rule());
    putIfSet(m, "error", o.error());
    if (o.cached()) m.put("cached", true);
    return m;
  }

  /** A call's totals and context as they were when it ended, for its record. */
  private record Ended(
      Status status,
      long durationNanos,
      byte[] firstRequest,
      String firstRequestHash,
      long bytesIn,
      long bytesOut,
      long messagesIn,
      long messagesOut,
      long rows,
      Principal principal,
      RequestHead head,
      Call.Decided decided,
      Route route,
      AuditEvent.Sealed event) {}

  /** The request's own fields, as its first message named them. */
  private static void head(RequestHead head, Map<String, Object> record) {
    putIfSet(record, "session_id", head.sessionId());
    putIfSet(record, "operation_id", head.operationId());
    putIfSet(record, "client_type", head.clientType());
    putIfSet(record, "client_observed_server_side_session_id", head.observedServerSessionId());
    putIfSet(record, "new_session_id", head.newSessionId());
    if (head.planBytes() > 0) {
      record.put("plan_bytes", head.planBytes());
      putIfSet(record, "plan_compression", head.planCompression());
    }
  }

  /** Who called. */
  private static void principal(Principal principal, Map<String, Object> record) {
    if (principal == null) {
      return;
    }
    record.put("principal", principal.name());
    record.put("groups", principal.groups());
    principal.tenant().ifPresent(t -> record.put("tenant", t));
    record.put("auth_method", principal.method().name().toLowerCase(Locale.ROOT));
    principal.clientCertSubject().ifPresent(s -> record.put("client_cert_subject", s));
  }

  private static void putIfSet(Map<String, Object> record, String field, String value) {
    if (value != null && !value.isEmpty()) {
      record.put(field, value);
    }
  }

  private static void putList(
      Map<String, Object> record, String field, java.util.List<String> values) {
    if (!values.isEmpty()) {
      record.put(field, values);
    }
  }

  /**
   * Spark's error messages quote data (a value that failed to cast, a row that broke a constraint), so
   * unless {@code audit.include_literals} is on only the error class and SQLSTATE are kept.
   */
  private String statusMessage(String description) {
    if (auditLog.config().includeLiterals()) {
      return truncate(description, 4000);
    }
    int close = description.indexOf(']');
    if (description.startsWith("[") && close > 0) {
      String errorClass = description.substring(0, close + 1);
      int state = description.lastIndexOf(SQLSTATE);
      // A SQLSTATE is five characters.
      return state < 0
          ? errorClass
          : errorClass
              + " "
              + description.substring(
                  state, Math.min(description.length(), state + SQLSTATE.length() + 5));
    }
    return truncate(description, 200);
  }

  private static String truncate(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max) + "...";
  }

  /** {@code {"table": "...", "privilege": "select", "grant": "finance-team"}}; a refused one has no grant. */
  private static Map<String, Object> dataUse(AuditEvent.DataUse use) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put(use.target(), use.name());
    out.put("privilege", use.privilege());
    if (use.grant() == null) out.put("refused", true);
    else out.put("grant", use.grant());
    return out;
  }
}
