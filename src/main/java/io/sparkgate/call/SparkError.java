package io.sparkgate.call;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * An error a stage sends the client in the shape Spark's own server uses (see the policy package's
 * refusals for why each part is there): the error class and SQLSTATE in the message text, an {@link
 * ErrorInfo} that every Spark client turns into a readable exception, and for errors worth retrying a
 * {@code google.rpc.RetryInfo} saying when. No {@code errorId}: the server never saw the error.
 *
 * @param errorClass e.g. {@code SPARKGATE_QUOTA_EXCEEDED}
 * @param parameters what the error names (the quota and its limit, the pool ...), in {@code
 *     messageParameters}
 * @param retryAfter empty: not worth retrying (the client should not)
 */
public record SparkError(
    Status.Code code,
    String errorClass,
    String message,
    String sqlState,
    Map<String, String> parameters,
    java.util.Optional<Duration> retryAfter) {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String EXCEPTION = "org.apache.spark.SparkException";
  private static final List<String> CLASSES =
      List.of(EXCEPTION, "java.lang.Exception", "java.lang.Throwable");

  public SparkError {
    parameters = Map.copyOf(parameters);
  }

  /** The text the client prints: {@code [CLASS] message SQLSTATE: xxxxx}. */
  public String text() {
    return "[" + errorClass + "] " + message + " SQLSTATE: " + sqlState;
  }

  public StatusException toException() {
    ErrorInfo info;
    try {
      info =
          ErrorInfo.newBuilder()
              .setReason(EXCEPTION)
              .setDomain("org.apache.spark")
              .putMetadata("classes", JSON.writeValueAsString(CLASSES))
              .putMetadata("sqlState", sqlState)
              .putMetadata("messageParameters", JSON.writeValueAsString(parameters))
              .build();
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    com.google.rpc.Status.Builder status =
        com.google.rpc.Status.newBuilder()
            .setCode(code.value())
            .setMessage(text())
            .addDetails(Any.pack(info));
    retryAfter.ifPresent(
        d ->
            status.addDetails(
                Any.pack(
                    RetryInfo.newBuilder()
                        .setRetryDelay(
                            com.google.protobuf.Duration.newBuilder()
                                .setSeconds(d.getSeconds())
                                .setNanos(d.getNano()))
                        .build())));
    return StatusProto.toStatusException(status.build());
  }
}
