package io.sparkgate.audit;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.MethodDescriptor;
import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.sparkgate.forward.CallHooks;
import io.sparkgate.forward.Payload;
import io.sparkgate.proto.spark.Base;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one audit record for every Spark Connect call, when the call ends, whatever ended it: the
 * backend's answer, a refusal by any stage (authentication included), or the client going away. It sits
 * outermost, so it records exactly what the client saw; inner stages add what they learnt through
 * {@link CallEvidence}. With {@code audit.required}, calls are refused while the log cannot take records.
 */
public final class AuditInterceptor implements ServerInterceptor {
  private static final Logger log = LoggerFactory.getLogger(AuditInterceptor.class);
  private static final String SERVICE = "spark.connect.SparkConnectService";
  private static final Set<String> REQUEST_FIELDS =
      Set.of("session_id", "operation_id", "client_type", "client_observed_server_side_session_id",
          "new_session_id");
  private static final Set<String> RESPONSE_FIELDS = Set.of("server_side_session_id", "operation_id");
  private static final String SQLSTATE = "SQLSTATE: ";

  private final AuditLog auditLog;
  private final Clock clock;
  private final Map<String, WireScanner> requestScanners = new HashMap<>();
  private final Map<String, WireScanner> responseScanners = new HashMap<>();
  private final AtomicLong refusedUnaudited = new AtomicLong();

  public AuditInterceptor(AuditLog auditLog, Clock clock) {
    this.auditLog = auditLog;
    this.clock = clock;
    for (MethodDescriptor method : Base.getDescriptor().findServiceByName("SparkConnectService").getMethods()) {
      String name = SERVICE + "/" + method.getName();
      requestScanners.put(name, new WireScanner(method.getInputType(), REQUEST_FIELDS));
      // ExecutePlan's and ReattachExecute's responses carry the result batches whose rows are counted.
      boolean countsRows = method.getName().equals("ExecutePlan") || method.getName().equals("ReattachExecute");
      responseScanners.put(name, new WireScanner(method.getOutputType(), RESPONSE_FIELDS, "response_", countsRows));
    }
  }

  /** Calls refused because the audit log could not take their record ({@code audit.required}). */
  public long refusedUnaudited() {
    return refusedUnaudited.get();
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
      ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    WireScanner requestScanner = requestScanners.get(method);
    if (requestScanner == null) {
      return next.startCall(call, headers); // the health service and unknown names are not audited
    }
    if (auditLog.config().required() && !auditLog.accepting()) {
      refusedUnaudited.incrementAndGet();
      log.warn("refusing {}: the audit log is not accepting records and audit.required is true", method);
      call.close(Status.UNAVAILABLE.withDescription("Sparkgate cannot audit calls right now; retry shortly"),
          new Metadata());
      return new ServerCall.Listener<>() {};
    }
    CallEvidence evidence = new CallEvidence();
    Audited<ReqT, RespT> audited = new Audited<>(call, evidence, requestScanner, responseScanners.get(method));
    Context context = Context.current().withValue(CallEvidence.KEY, evidence);
    return audited.new Listener(CallHooks.startIn(context, audited, headers, next));
  }

  /**
   * One call being audited: counts what passes, and queues the record once at the end. The record itself
   * (formatting, the request's hash, the request id) is built by the audit writer from this object, after
   * the call's last response has left: none of it is on the path of a call.
   */
  private final class Audited<ReqT, RespT> extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {
    /** A first request message up to this size is hashed and scanned by the writer; larger ones at once. */
    private static final int DEFERRED_REQUEST_BYTES = 64 * 1024;
    /** A later response's row count follows its session id (a UUID): well within its first bytes. */
    private static final int ROW_COUNT_BYTES = 256;

    private final CallEvidence evidence;
    private final WireScanner requestScanner;
    private final WireScanner responseScanner;
    private final Instant started = clock.instant();
    private final long startNanos = System.nanoTime();
    private final AtomicBoolean recorded = new AtomicBoolean();
    // Each count has one writer at a time: gRPC delivers requests one after another, and a call's sends
    // must not overlap. Volatile, not atomic, is then enough for close() (on either side) to read them.
    private volatile long bytesIn;
    private volatile long messagesIn;
    private volatile long bytesOut;
    private volatile long messagesOut;
    private volatile long rows;
    /** Reads the first response: the record's response fields, and its rows. */
    private final Payload.Reader<Long> firstResponse;
    /** The first request message, kept for the writer to read (see DEFERRED_REQUEST_BYTES); else null. */
    private volatile byte[] firstRequest;

    Audited(ServerCall<ReqT, RespT> call, CallEvidence evidence, WireScanner requestScanner,
        WireScanner responseScanner) {
      super(call);
      this.evidence = evidence;
      this.requestScanner = requestScanner;
      this.responseScanner = responseScanner;
      this.firstResponse = in -> responseScanner.scan(in, evidence::putIfAbsent);
    }

    @Override
    public void sendMessage(RespT message) {
      if (message instanceof Payload payload) {
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
          log.warn("audit could not read a response of {}", getMethodDescriptor().getBareMethodName(), e);
        }
      }
      super.sendMessage(message);
    }

    @Override
    public void close(Status status, Metadata trailers) {
      record(status);
      super.close(status, trailers);
    }

    void onRequest(Object message) {
      if (message instanceof byte[] bytes) {
        bytesIn += bytes.length;
        if (messagesIn++ == 0) {
          if (bytes.length <= DEFERRED_REQUEST_BYTES) {
            firstRequest = bytes; // request arrays are never modified: stages that rewrite make new ones
          } else {
            // Not held for the length of the call: read now, ahead of every stage's own evidence.
            requestEvidence(bytes, evidence::putIfAbsent);
          }
        }
      }
    }

    /** The request's own fields and hash, for the record. */
    private void requestEvidence(byte[] request, BiConsumer<String, Object> into) {
      requestScanner.scan(CodedInputStream.newInstance(request), into);
      into.accept("request_sha256", sha256(request));
    }

    void record(Status status) {
      if (!recorded.compareAndSet(false, true)) {
        return;
      }
      evidence.seal(); // what stages learn after the call ended is not part of its record
      Ended ended = new Ended(status, System.nanoTime() - startNanos, firstRequest, bytesIn, bytesOut, messagesIn,
          messagesOut, rows);
      if (!auditLog.write(() -> buildRecord(ended))) {
        log.error("audit record dropped (queue full): rpc={} started={}", getMethodDescriptor().getBareMethodName(),
            started);
      }
    }

    /** The record, on the audit writer's thread. */
    private Map<String, Object> buildRecord(Ended ended) {
      Status status = ended.status();
      Map<String, Object> record = AuditLog.newRecord();
      record.put("time", started.toString());
      record.put("request_id", UUID.randomUUID().toString());
      record.put("rpc", getMethodDescriptor().getBareMethodName());
      Object remote = getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
      if (remote != null) {
        record.put("client_address", remote.toString());
      }
      if (ended.firstRequest() != null) {
        // Where it was when read at once (no stage sets these names).
        requestEvidence(ended.firstRequest(), record::put);
      }
      evidence.forEachField(record::put);
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

    /** Listener side: requests in, and a client that goes away. */
    final class Listener extends ForwardingServerCallListener.SimpleForwardingServerCallListener<ReqT> {
      Listener(ServerCall.Listener<ReqT> delegate) {
        super(delegate);
      }

      @Override
      public void onMessage(ReqT message) {
        onRequest(message);
        super.onMessage(message);
      }

      @Override
      public void onCancel() {
        try {
          super.onCancel();
        } finally {
          record(Status.CANCELLED.withDescription("the client cancelled the call or went away"));
        }
      }
    }
  }

  /** A call's totals as they were when it ended, for its record. */
  private record Ended(Status status, long durationNanos, byte[] firstRequest, long bytesIn, long bytesOut,
      long messagesIn, long messagesOut, long rows) {}

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
      return state < 0 ? errorClass
          : errorClass + " " + description.substring(state, Math.min(description.length(), state + SQLSTATE.length() + 5));
    }
    return truncate(description, 200);
  }

  private static String truncate(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max) + "...";
  }

  private static String sha256(byte[] bytes) {
    return HashChain.sha256Hex(bytes);
  }

}
