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

  public SparkError {
    parameters = Map.copyOf(parameters);
  }

  /**
   * The {@link ErrorInfo} Spark's server attaches to an error: {@code reason} the exception class, the class
   * chain, the SQLSTATE and the message parameters, which every Spark client reads.
   */
  public static ErrorInfo errorInfo(
      String exceptionClass, String sqlState, Map<String, String> parameters) {
    try {
      return ErrorInfo.newBuilder()
          .setReason(exceptionClass)
          .setDomain("org.apache.spark")
          .putMetadata(
              "classes",
              JSON.writeValueAsString(
                  List.of(exceptionClass, "java.lang.Exception", "java.lang.Throwable")))
          .putMetadata("sqlState", sqlState)
          .putMetadata("messageParameters", JSON.writeValueAsString(parameters))
          .build();
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The text the client prints: {@code [CLASS] message SQLSTATE: xxxxx}. */
  public String text() {
    return "[" + errorClass + "] " + message + " SQLSTATE: " + sqlState;
  }

  public StatusException toException() {
    ErrorInfo info = errorInfo(EXCEPTION, sqlState, parameters);
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

  /** Text a client sent (a token's field, a declared name) as it goes into a message or a log: short, printable. */
  public static String printable(String s) {
    String cut = s.length() > 80 ? s.substring(0, 80) + "..." : s;
    return cut.replaceAll("[^\\x20-\\x7e]", "?");
  }
}
