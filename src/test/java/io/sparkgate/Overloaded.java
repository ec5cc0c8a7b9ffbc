package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;

/** What a client refused by one of the proxy's limits gets, as Spark's clients read it. */
final class Overloaded {
  private Overloaded() {}

  /** The status details of a refusal and their ErrorInfo. */
  record Refusal(com.google.rpc.Status details, ErrorInfo info) {}

  /**
   * Asserts that {@code error} is such a refusal: RESOURCE_EXHAUSTED with a google.rpc.Status that carries a
   * RetryInfo of a second or more and an ErrorInfo with SQLSTATE 53400. Returns both, for more checks.
   */
  static Refusal assertRefusal(Throwable error) throws Exception {
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, Status.fromThrowable(error).getCode(), "" + error);
    com.google.rpc.Status details = StatusProto.fromThrowable(error);
    assertNotNull(details, "no google.rpc.Status in the trailers");
    ErrorInfo info = null;
    RetryInfo retry = null;
    for (var any : details.getDetailsList()) {
      if (any.is(ErrorInfo.class)) info = any.unpack(ErrorInfo.class);
      if (any.is(RetryInfo.class)) retry = any.unpack(RetryInfo.class);
    }
    assertNotNull(info, "no ErrorInfo: Spark clients would not show the error class");
    assertEquals("53400", info.getMetadataOrThrow("sqlState"));
    assertNotNull(retry, "no RetryInfo");
    assertTrue(retry.getRetryDelay().getSeconds() >= 1, retry.toString());
    return new Refusal(details, info);
  }
}
