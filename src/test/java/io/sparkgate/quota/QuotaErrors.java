package io.sparkgate.quota;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.StatusException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.Map;

/** What a client finds in a refusal's trailers, decoded as Spark's client decodes them. */
final class QuotaErrors {
  private QuotaErrors() {}

  static ErrorInfo errorInfo(StatusException e) throws InvalidProtocolBufferException {
    for (Any detail : StatusProto.fromThrowable(e).getDetailsList()) {
      if (detail.is(ErrorInfo.class)) return detail.unpack(ErrorInfo.class);
    }
    throw new AssertionError("no ErrorInfo in " + e);
  }

  /** The RetryInfo's delay, or null without one. */
  static Duration retryDelay(StatusException e) throws InvalidProtocolBufferException {
    for (Any detail : StatusProto.fromThrowable(e).getDetailsList()) {
      if (detail.is(RetryInfo.class)) {
        com.google.protobuf.Duration d = detail.unpack(RetryInfo.class).getRetryDelay();
        return Duration.ofSeconds(d.getSeconds(), d.getNanos());
      }
    }
    return null;
  }

  static Map<String, String> parameters(StatusException e) {
    if (e == null) throw new AssertionError("not refused");
    try {
      return new ObjectMapper()
          .readValue(
              errorInfo(e).getMetadataOrThrow("messageParameters"),
              new TypeReference<Map<String, String>>() {});
    } catch (Exception x) {
      throw new AssertionError(x);
    }
  }
}
