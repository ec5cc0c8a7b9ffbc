package io.sparkgate.policy;

import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import io.grpc.StatusException;
import io.grpc.protobuf.StatusProto;
import io.sparkgate.call.SparkError;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Turns a refusal into the error Spark's own server would send (ErrorUtils in the Connect server): a
 * {@code google.rpc.Status} in {@code grpc-status-details-bin} holding an {@link ErrorInfo} with reason = the
 * exception class, domain {@code org.apache.spark}, and metadata {@code classes},
 * {@code sqlState}, {@code messageParameters}. The JVM client (GrpcExceptionConverter) and PySpark turn that
 * into an AnalysisException whose message is the status message. No {@code errorId}: the client would ask
 * the server for details (FetchErrorDetails) about an error the server never saw. No {@code errorClass}
 * either: the 4.0 JVM client looks the class up in its bundled error-conditions.json and, for a class it does
 * not know, replaces the whole message with "[INTERNAL_ERROR] Cannot find main error class" (seen in
 * PolicyIT); Spark 4.0 has no class with SQLSTATE 42501 to borrow. So the error class and SQLSTATE are in the
 * message text, as Spark formats its own ("[CLASS] ... SQLSTATE: 42501"), and {@code sqlState} is in the
 * metadata for clients that read it (PySpark).
 */
final class Refusals {
  static final String EXCEPTION = "org.apache.spark.sql.AnalysisException";

  private Refusals() {}

  /** The text the client shows, e.g. {@code [SPARKGATE_POLICY_DENIED] ... rule 'x' ... SQLSTATE: 42501}. */
  static String text(Decision d) {
    return "["
        + d.errorClass()
        + "] Sparkgate policy rule '"
        + d.rule()
        + "' refused this request: "
        + d.message()
        + " SQLSTATE: "
        + d.sqlState();
  }

  static StatusException toException(Decision d) {
    Map<String, String> params = new LinkedHashMap<>();
    params.put("rule", d.rule());
    params.put("reason", d.message());
    ErrorInfo info = SparkError.errorInfo(EXCEPTION, d.sqlState(), params);
    com.google.rpc.Status status =
        com.google.rpc.Status.newBuilder()
            .setCode(d.code().value())
            .setMessage(text(d))
            .addDetails(Any.pack(info))
            .build();
    return StatusProto.toStatusException(status);
  }
}
