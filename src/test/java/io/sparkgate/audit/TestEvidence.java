package io.sparkgate.audit;

import io.grpc.Context;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** Runs code as if inside a proxied call and returns the audit evidence it recorded (tests of other stages). */
public final class TestEvidence {
  private TestEvidence() {}

  /** The evidence recorded while {@code body} ran; {@code body}'s exception, if any, is in {@code thrown}. */
  public record Recorded(Map<String, Object> fields, Exception thrown) {}

  public static Recorded record(Callable<?> body) {
    CallEvidence evidence = new CallEvidence();
    Exception thrown = null;
    try {
      Context.current().withValue(CallEvidence.KEY, evidence).call(body);
    } catch (Exception e) {
      thrown = e;
    }
    Map<String, Object> fields = new LinkedHashMap<>();
    evidence.forEachField(fields::put);
    return new Recorded(fields, thrown);
  }
}
