package io.sparkgate.inspect;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.WireFormat;
import io.sparkgate.proto.spark.UserContext;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * The REQUEST fact's strings (session, client type, operation, claimed user) read straight from a request's
 * encoding. Building the request head as a message and reading it through protobuf's reflection cost about
 * 4 us of every call on a busy event loop (descriptor lookups, reflective getters); these are five strings.
 * Gives exactly what {@link Proto#str} gives on the parsed request, which EncodedWalkTest checks on random
 * and corrupted requests of every method.
 */
final class RequestHead {
  private static final Map<Descriptor, RequestHead> BY_TYPE = new HashMap<>();
  private static final StringField USER_ID = StringField.of(UserContext.getDescriptor(), "user_id");
  private static final StringField USER_NAME =
      StringField.of(UserContext.getDescriptor(), "user_name");

  static {
    for (Message prototype : Requests.prototypes()) {
      Descriptor type = prototype.getDescriptorForType();
      FieldDescriptor uc = type.findFieldByName("user_context");
      boolean ucReadable =
          uc == null || (uc.getMessageType() == UserContext.getDescriptor() && !uc.isRepeated());
      StringField session = StringField.of(type, "session_id");
      StringField client = StringField.of(type, "client_type");
      StringField operation = StringField.of(type, "operation_id");
      StringField observed = StringField.of(type, "client_observed_server_side_session_id");
      StringField newSession = StringField.of(type, "new_session_id");
      boolean strings =
          USER_ID != null
              && USER_NAME != null
              && session != null
              && client != null
              && operation != null
              && observed != null
              && newSession != null;
      if (ucReadable && strings) {
        BY_TYPE.put(
            type,
            new RequestHead(
                session, client, operation, observed, newSession, uc == null ? 0 : uc.getNumber()));
      }
    }
  }

  private final StringField sessionId;
  private final StringField clientType;
  private final StringField operationId;
  private final StringField observedSessionId;
  private final StringField newSessionId;
  private final int userContext; // field number, 0 when the request has none

  private RequestHead(
      StringField sessionId,
      StringField clientType,
      StringField operationId,
      StringField observedSessionId,
      StringField newSessionId,
      int userContext) {
    this.sessionId = sessionId;
    this.clientType = clientType;
    this.operationId = operationId;
    this.observedSessionId = observedSessionId;
    this.newSessionId = newSessionId;
    this.userContext = userContext;
  }

  /**
   * The reader for requests of this type, or null where a field is not a plain string (such a request is
   * inspected from its parse).
   */
  static RequestHead of(Message prototype) {
    return BY_TYPE.get(prototype.getDescriptorForType());
  }

  /**
   * Emits the REQUEST fact of a request whose top level {@link Wire} accepted, and returns the session it runs
   * in. Throws {@link Wire#UNUSUAL} where protobuf would not parse the strings (bad UTF-8, a truncated
   * user_context).
   */
  SessionView emit(String method, byte[] bytes, FactSink sink, SessionViews views) {
    // session, client type, operation, user id, user name, observed server session, new session
    String[] values = new String[7];
    boolean hasUserContext = false;
    try {
      CodedInputStream in = CodedInputStream.newInstance(bytes);
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        int number = WireFormat.getTagFieldNumber(tag);
        if (number == userContext
            && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          hasUserContext = true;
          int limit = in.pushLimit(in.readRawVarint32());
          readUserContext(in, values);
          in.popLimit(limit);
        } else if (!sessionId.read(in, tag, values, 0)
            && !clientType.read(in, tag, values, 1)
            && !operationId.read(in, tag, values, 2)
            && !observedSessionId.read(in, tag, values, 5)
            && !newSessionId.read(in, tag, values, 6)) {
          in.skipField(tag);
        }
      }
    } catch (IOException e) {
      throw Wire.UNUSUAL;
    }
    FactSink.Builder b =
        sink.fact(Fact.Kind.REQUEST, method)
            .put("method", method)
            .put("session_id", sessionId.value(values[0]))
            .put("client_type", clientType.value(values[1]))
            .put("operation_id", operationId.value(values[2]))
            .put("client_observed_server_side_session_id", observedSessionId.value(values[5]))
            .put("new_session_id", newSessionId.value(values[6]));
    String userId = null;
    if (hasUserContext) {
      userId = USER_ID.value(values[3]);
      b.put("user_id", userId).put("user_name", USER_NAME.value(values[4]));
    }
    b.emit();
    String session = sessionId.value(values[0]);
    return views.view(userId == null ? "" : userId, session == null ? "" : session);
  }

  private static void readUserContext(CodedInputStream in, String[] values) throws IOException {
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      if (!USER_ID.read(in, tag, values, 3) && !USER_NAME.read(in, tag, values, 4)) {
        in.skipField(tag);
      }
    }
  }
}
