package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Message;
import io.sparkgate.fuzz.FuzzRequests;
import io.sparkgate.testing.TestFacts;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What must hold for every request message the inspector is given, whatever its bytes: the fuzz tests'
 * oracle. Properties only, never expectations on particular facts, so that the inspector can grow.
 */
final class RequestProperties {
  private RequestProperties() {}

  /** Every bound small enough for short fuzzer inputs to cross it: depth, SQL length, inflated size, facts. */
  private static final Inspector SMALL_BOUNDS =
      new Inspector(new InspectorConfig(16, 64, 1024, 10, Set.of()));

  private static final Inspector DEFAULTS = new Inspector();

  /** A backend with Hudi's and Iceberg's session extensions, whose grammars the inspector then reads too. */
  private static final SessionView LAKEHOUSE =
      new BackendProfile(
              "3.5.7",
              List.of(
                  "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
                  "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"),
              Map.of("cat", "org.apache.iceberg.spark.SparkCatalog"),
              null)
          .freshSession();

  /** The variants every request can be checked under: bounds by session. */
  private static final Inspector[] INSPECTORS = {DEFAULTS, SMALL_BOUNDS, DEFAULTS, SMALL_BOUNDS};

  private static final SessionView[] SESSIONS = {
    SessionView.DEFAULT, SessionView.of("cat", "db", Set.of("cat", "other")), LAKEHOUSE, LAKEHOUSE,
  };
  static final int VARIANTS = INSPECTORS.length;

  /**
   * The request read from its encoding and from protobuf's parse gives the same facts (the proxy relies on
   * the first being as good as the second); there is always at least one fact, so no request passes as
   * "nothing seen"; bytes that do not parse as the method's request (or an unknown method) are UNCLASSIFIED;
   * and no exception escapes or is swallowed into an inspector_error fact, which, though refused, is a bug.
   */
  static Facts check(FuzzRequests.Request request, int variant) {
    Inspector inspector = INSPECTORS[variant];
    SessionView session = SESSIONS[variant];
    Facts encoded =
        Readings.read(inspector, request.method(), request.bytes(), session, null, true);
    Facts parsed =
        Readings.read(inspector, request.method(), request.bytes(), session, null, false);
    assertEquals(
        parsed.all(), encoded.all(), () -> "encoded and parsed readings differ for " + request);
    assertFalse(encoded.all().isEmpty(), () -> "no fact at all for " + request);
    assertFalse(
        TestFacts.has(encoded, Fact.Kind.UNCLASSIFIED, "inspector_error"),
        () -> "the inspector threw:\n" + encoded);
    if (!parses(request)) {
      assertTrue(
          encoded.has(Fact.Kind.UNCLASSIFIED),
          () -> "malformed " + request + " not UNCLASSIFIED:\n" + encoded);
    }
    return encoded;
  }

  /** Whether protobuf itself accepts the bytes as the method's request, nesting aside (a bound of its own). */
  private static boolean parses(FuzzRequests.Request request) {
    Message prototype = Requests.prototype(request.method());
    if (prototype == null) return false;
    CodedInputStream in = CodedInputStream.newInstance(request.bytes());
    in.setRecursionLimit(Integer.MAX_VALUE);
    try {
      prototype.getParserForType().parseFrom(in);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
