package io.sparkgate.inspect;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.sparkgate.proto.spark.AddArtifactsRequest;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Reads Spark Connect request messages and reports what they would make the server do, as {@link Facts}.
 * Thread-safe and stateless apart from the per-call {@link ArtifactTracker}. Never throws on any input: what it
 * cannot read is an UNCLASSIFIED fact.
 */
public final class Inspector {
  /** What walking a method's requests from their encoding takes, found once: one lookup per call, not three. */
  private record Encoded(HeadLayout head, Shape shape) {}

  /** By bare method name; a method absent here is inspected from its parse. */
  private static final Map<String, Encoded> ENCODED = encodedMethods();

  private final InspectorConfig config;
  private final SqlInspector sql;

  public Inspector() {
    this(InspectorConfig.DEFAULTS);
  }

  /** Strings are parsed with the parser settings of the session each request runs in. */
  public Inspector(InspectorConfig config) {
    this.config = Objects.requireNonNull(config, "config");
    this.sql = new SqlInspector(config);
  }

  /** A tracker for one AddArtifacts call; pass it to every message of that call. */
  public ArtifactTracker newArtifactTracker() {
    return new ArtifactTracker();
  }

  /**
   * The facts of one request message. {@code method} is the RPC name, bare ("ExecutePlan") or full
   * ("spark.connect.SparkConnectService/ExecutePlan"). AddArtifacts messages are read alone (a chunk after
   * this message cannot be attributed); use the overload with a tracker for a stream.
   */
  public Facts inspect(String method, byte[] request, SessionView session) {
    return inspect(method, request, session, null);
  }

  public Facts inspect(
      String method, byte[] request, SessionView session, ArtifactTracker tracker) {
    return inspect(method, request, SessionViews.fixed(session), tracker);
  }

  /**
   * The facts of one request message, read in one pass: its head first (the REQUEST fact), then the rest in
   * the session {@code sessions} gives for the head's user and session.
   *
   * @throws SessionStates.Unavailable when {@code sessions} cannot read the session from its shared store
   */
  public Facts inspect(
      String method, byte[] request, SessionViews sessions, ArtifactTracker tracker) {
    String name = Requests.shortName(Objects.requireNonNull(method, "method"));
    FactSink sink = new FactSink(config.maxFacts());
    try {
      if (inspectEncoded(name, request, sessions, sink)) {
        return sink.build();
      }
    } catch (SessionStates.Unavailable | SessionStates.Lost e) {
      throw e; // not the request's fault: the call is answered for what happened to its session
    } catch (RuntimeException | StackOverflowError e) {
      return failed(sink, name, e);
    }
    return inspectParsed(name, request, sessions, tracker);
  }

  /**
   * The facts of one request message read from the parsed request: what {@link #inspect} falls back to when
   * the encoding will not do, and the reference its reading of the encoding must agree with.
   */
  Facts inspectParsed(
      String method, byte[] request, SessionViews sessions, ArtifactTracker tracker) {
    String name = Requests.shortName(Objects.requireNonNull(method, "method"));
    FactSink sink = new FactSink(config.maxFacts());
    try {
      inspectInto(name, request, sessions, tracker, sink);
    } catch (SessionStates.Unavailable | SessionStates.Lost e) {
      throw e;
    } catch (RuntimeException | StackOverflowError e) {
      return failed(sink, name, e);
    }
    return sink.build();
  }

  /** Fail closed: a bug here must never let a request pass as "nothing seen". */
  private static Facts failed(FactSink sink, String method, Throwable e) {
    sink.fact(Fact.Kind.UNCLASSIFIED, "inspector_error")
        .put("method", method)
        .put("detail", e.toString())
        .emit();
    return sink.build();
  }

  /** The facts of the end of an AddArtifacts stream (an artifact begun and never completed). */
  public Facts finishArtifacts(ArtifactTracker tracker) {
    return tracker.finish(config.maxFacts());
  }

  /**
   * How a session view names a persisted plan among the cache entries it may drop ({@link
   * SessionView.Fixed#withState}): for policy tests that describe a session that persisted one.
   */
  public static String cachedPlanKey(Message relation) {
    return CacheOwners.planKey(Detectors.planDigest(relation));
  }

  /** Convenience for tools and tests: a SQL text as if sent in ExecutePlan's Relation.sql. */
  public Facts inspectSql(String sqlText, SessionView session) {
    FactSink sink = new FactSink(config.maxFacts());
    sql.statement(
        sqlText, "relation", "sql", session == null ? SessionView.DEFAULT : session, sink);
    return sink.build();
  }

  /**
   * The facts of a request walked from its encoding, parsing only the messages detectors read: for a large
   * plan a fraction of the cost of parsing it. False, with the facts so far to be discarded, for what needs
   * the parsed request: an encoding {@link Wire} does not accept (malformed, too deep, unknown fields, fields
   * repeated or out of order), an unknown method, an AddArtifacts stream's state.
   */
  private boolean inspectEncoded(
      String method, byte[] bytes, SessionViews sessions, FactSink sink) {
    Encoded encoded = ENCODED.get(method);
    if (encoded == null) return false;
    try {
      SessionView session = encoded.head().emit(method, bytes, sink, sessions);
      new PlanWalker(config, new Detectors(config, sql, sink), sink)
          .walkEncoded(bytes, encoded.shape(), session);
      return true;
    } catch (Wire.Unusual e) {
      return false;
    }
  }

  /** Methods whose request head {@link HeadLayout} reads; AddArtifacts streams need their tracker's state. */
  private static Map<String, Encoded> encodedMethods() {
    Map<String, Encoded> out = new HashMap<>();
    Requests.byMethod()
        .forEach(
            (method, prototype) -> {
              HeadLayout head = HeadLayout.forMethod(method);
              if (head != null && !(prototype instanceof AddArtifactsRequest)) {
                out.put(method, new Encoded(head, Shape.of(prototype)));
              }
            });
    return Map.copyOf(out);
  }

  private void inspectInto(
      String method, byte[] bytes, SessionViews sessions, ArtifactTracker tracker, FactSink sink) {
    Message prototype = Requests.prototype(method);
    if (prototype == null) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_method").put("method", method).emit();
      return;
    }
    Message request;
    try {
      request = Requests.parse(prototype, bytes, config.maxDepth());
    } catch (InvalidProtocolBufferException e) {
      sink.fact(Fact.Kind.REQUEST, method).put("method", method).put("bytes", bytes.length).emit();
      Requests.parseFailure(e, method, config, sink);
      return;
    } catch (IOException e) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "unparseable_request")
          .put("where", method)
          .put("detail", e.toString())
          .emit();
      return;
    }
    SessionView session = requestFact(method, request, sink, sessions);
    if (request instanceof AddArtifactsRequest add) {
      (tracker == null ? new ArtifactTracker() : tracker).observe(add, sink);
      // Also walked generically: unknown fields, extensions in user_context.
    }
    new PlanWalker(config, new Detectors(config, sql, sink), sink).walk(request, null, session);
  }

  /** Emits the REQUEST fact of a parsed request and returns the session it runs in. */
  private static SessionView requestFact(
      String method, Message request, FactSink sink, SessionViews sessions) {
    String sessionId = Proto.str(request, "session_id");
    String userId = null;
    FactSink.Builder b =
        sink.fact(Fact.Kind.REQUEST, method)
            .put("method", method)
            .put("session_id", sessionId)
            .put("client_type", Proto.str(request, "client_type"))
            .put("operation_id", Proto.str(request, "operation_id"))
            .put(
                "client_observed_server_side_session_id",
                Proto.str(request, "client_observed_server_side_session_id"))
            .put("new_session_id", Proto.str(request, "new_session_id"));
    if (Proto.has(request, "user_context")) {
      Message uc = (Message) request.getField(Proto.field(request, "user_context"));
      userId = Proto.str(uc, "user_id");
      b.put("user_id", userId).put("user_name", Proto.str(uc, "user_name"));
    }
    b.emit();
    return sessions.view(userId == null ? "" : userId, sessionId == null ? "" : sessionId);
  }
}
