package io.sparkgate.inspect;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.WireFormat;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.ReattachOptions;
import io.sparkgate.proto.spark.UserContext;
import java.io.IOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Where one request type keeps the fields of its head, found once from its descriptor, and their reading from
 * a request's encoding: the top level, and in place the few nested fields the head reports (the reattach
 * option, the Config operation, the plan's compression). Reads what protobuf-java parses: the last occurrence
 * of a field wins, a message field given twice is merged, a oneof keeps its last member, a tag of the wrong
 * wire type is an unknown field. The call's typed {@link RequestHead} and the inspector's REQUEST fact both
 * come from here; EncodedWalkTest and RequestHeadTest check it against the parsed request.
 */
final class HeadLayout {
  private static final Map<String, HeadLayout> BY_METHOD = new HashMap<>();
  private static final StringField USER_ID = StringField.of(UserContext.getDescriptor(), "user_id");
  private static final StringField USER_NAME =
      StringField.of(UserContext.getDescriptor(), "user_name");

  /** Slots of the strings read. */
  static final int SESSION = 0;

  static final int CLIENT = 1;
  static final int OPERATION = 2;
  static final int USER = 3;
  static final int USER_NAME_SLOT = 4;
  static final int OBSERVED = 5;
  static final int NEW_SESSION = 6;

  /** The slots of the request's own string fields (the user's are read inside its user_context). */
  private static final int[] STRING_SLOTS = {SESSION, CLIENT, OPERATION, OBSERVED, NEW_SESSION};

  private static final int REATTACH_OPTIONS =
      tag(
          ExecutePlanRequest.RequestOption.REATTACH_OPTIONS_FIELD_NUMBER,
          WireFormat.WIRETYPE_LENGTH_DELIMITED);
  private static final int REATTACHABLE =
      tag(ReattachOptions.REATTACHABLE_FIELD_NUMBER, WireFormat.WIRETYPE_VARINT);
  private static final int[] OPTION_MEMBERS =
      members(ExecutePlanRequest.RequestOption.getDescriptor());
  private static final int[] CONFIG_MEMBERS = members(ConfigRequest.Operation.getDescriptor());
  private static final int[] PLAN_MEMBERS = members(Plan.getDescriptor());
  private static final int COMPRESSED =
      tag(Plan.COMPRESSED_OPERATION_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
  private static final int CODEC =
      tag(Plan.CompressedOperation.COMPRESSION_CODEC_FIELD_NUMBER, WireFormat.WIRETYPE_VARINT);

  static {
    Requests.byMethod()
        .forEach(
            (method, prototype) -> {
              HeadLayout layout = of(prototype.getDescriptorForType());
              if (layout != null) BY_METHOD.put(method, layout);
            });
  }

  private final StringField[] strings = new StringField[NEW_SESSION + 1]; // USER slots: unused
  private final int userContext; // tag, 0 when the request has none
  private final int requestOptions; // tag of ExecutePlanRequest.request_options, 0: none
  private final int interruptType; // tag of InterruptRequest.interrupt_type, 0: none
  private final int configOperation; // tag of ConfigRequest.operation, 0: none
  private final int plan; // tag of ExecutePlanRequest.plan, 0: none
  private final int releaseAll; // number of ReleaseExecuteRequest.release_all, 0: none

  /**
   * For each top-level field number (to the highest the type declares) the oneof it belongs to, -1 for none,
   * and the tag it is a member with (a tag of another wire type is an unknown field): a member seen later
   * clears the others, as in protobuf.
   */
  private final int[] oneofOf;

  private final int[] memberTag;

  private final int oneofs;

  private HeadLayout(Descriptor type, FieldDescriptor uc) {
    strings[SESSION] = StringField.of(type, "session_id");
    strings[CLIENT] = StringField.of(type, "client_type");
    strings[OPERATION] = StringField.of(type, "operation_id");
    strings[OBSERVED] = StringField.of(type, "client_observed_server_side_session_id");
    strings[NEW_SESSION] = StringField.of(type, "new_session_id");
    userContext = uc == null ? 0 : lengthDelimited(uc);
    requestOptions =
        fieldTag(type, "request_options", ExecutePlanRequest.RequestOption.getDescriptor());
    configOperation = fieldTag(type, "operation", ConfigRequest.Operation.getDescriptor());
    plan = fieldTag(type, "plan", Plan.getDescriptor());
    FieldDescriptor all = type.findFieldByName("release_all");
    releaseAll = all == null || all.getRealContainingOneof() == null ? 0 : all.getNumber();
    FieldDescriptor it = type.findFieldByName("interrupt_type");
    interruptType =
        it != null && it.getType() == FieldDescriptor.Type.ENUM && !it.isRepeated()
            ? tag(it.getNumber(), WireFormat.WIRETYPE_VARINT)
            : 0;
    int max = type.getFields().stream().mapToInt(FieldDescriptor::getNumber).max().orElse(0);
    oneofOf = new int[max + 1];
    memberTag = new int[max + 1];
    Arrays.fill(oneofOf, -1);
    int n = 0;
    for (OneofDescriptor oneof : type.getRealOneofs()) {
      for (FieldDescriptor f : oneof.getFields()) {
        oneofOf[f.getNumber()] = n;
        memberTag[f.getNumber()] = tag(f.getNumber(), f.getLiteType().getWireType());
      }
      n++;
    }
    oneofs = n;
  }

  /** The layout of requests of this type, or null where a head field is not what its name promises. */
  static HeadLayout of(Descriptor type) {
    FieldDescriptor uc = type.findFieldByName("user_context");
    boolean ucReadable =
        uc == null || (uc.getMessageType() == UserContext.getDescriptor() && !uc.isRepeated());
    HeadLayout layout = new HeadLayout(type, uc);
    boolean strings = USER_ID != null && USER_NAME != null;
    for (int slot : STRING_SLOTS) {
      strings &= layout.strings[slot] != null;
    }
    return ucReadable && strings ? layout : null;
  }

  /** The layout of a method's requests (bare name), null for an unknown method or an unusual type. */
  static HeadLayout forMethod(String method) {
    return BY_METHOD.get(method);
  }

  /** What one request's head says, as read from its encoding. */
  static final class Read {
    final String[] values = new String[NEW_SESSION + 1];
    boolean hasUserContext;
    boolean reattachable;
    int interruptType;
    int configMember; // the Config operation's op_type member, 0: none
    int planMember; // the plan's op_type member, 0: none
    int codec;
    long planBytes;
    final int[] lastMember;

    private Read(int oneofs) {
      lastMember = new int[oneofs];
    }
  }

  /** Reads the head of {@code bytes}; throws where protobuf would not parse what it reads. */
  Read read(byte[] bytes) throws IOException {
    Read r = new Read(oneofs);
    CodedInputStream in = CodedInputStream.newInstance(bytes);
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      int number = WireFormat.getTagFieldNumber(tag);
      if (tag == userContext) {
        r.hasUserContext = true;
        int limit = in.pushLimit(in.readRawVarint32());
        readUserContext(in, r.values);
        in.popLimit(limit);
      } else if (tag == requestOptions) {
        int limit = in.pushLimit(in.readRawVarint32());
        r.reattachable |= reattachOption(in);
        in.popLimit(limit);
      } else if (tag == interruptType) {
        r.interruptType = in.readEnum();
      } else if (tag == configOperation) {
        int limit = in.pushLimit(in.readRawVarint32());
        r.configMember = lastMember(in, CONFIG_MEMBERS, r.configMember);
        in.popLimit(limit);
      } else if (tag == plan) {
        int length = in.readRawVarint32();
        r.planBytes += length;
        int limit = in.pushLimit(length);
        readPlan(in, r);
        in.popLimit(limit);
      } else if (!readString(in, tag, r.values)) {
        in.skipField(tag);
      }
      if (number < memberTag.length && memberTag[number] == tag) {
        r.lastMember[oneofOf[number]] = number;
      }
    }
    return r;
  }

  /**
   * Emits the REQUEST fact of a request whose top level {@link Wire} accepted, and returns the session it runs
   * in. Throws {@link Wire#UNUSUAL} where protobuf would not parse the head (bad UTF-8, a truncated
   * user_context).
   */
  SessionView emit(String method, byte[] bytes, FactSink sink, SessionViews views) {
    Read r;
    try {
      r = read(bytes);
    } catch (IOException e) {
      throw Wire.UNUSUAL;
    }
    FactSink.Builder b =
        sink.fact(Fact.Kind.REQUEST, method)
            .put("method", method)
            .put("session_id", value(r, SESSION))
            .put("client_type", value(r, CLIENT))
            .put("operation_id", value(r, OPERATION))
            .put("client_observed_server_side_session_id", value(r, OBSERVED))
            .put("new_session_id", value(r, NEW_SESSION));
    String userId = userId(r);
    if (r.hasUserContext) {
      b.put("user_id", userId).put("user_name", userName(r));
    }
    b.emit();
    String session = value(r, SESSION);
    return views.view(userId == null ? "" : userId, session == null ? "" : session);
  }

  /** A string of the head, null when unset (or a oneof member another one replaced) as Proto#str gives it. */
  String value(Read r, int slot) {
    StringField field = strings[slot];
    String v = field.value(r.values[slot]);
    if (v == null || field == StringField.NONE) return v;
    int number = field.tag() >>> 3;
    int oneof = number < oneofOf.length ? oneofOf[number] : -1;
    return oneof >= 0 && r.lastMember[oneof] != number ? null : v;
  }

  /** The member of a ReleaseExecute's release oneof that the request set last; 0: none (or another method). */
  int releaseMember(Read r) {
    return releaseAll == 0 ? 0 : r.lastMember[oneofOf[releaseAll]];
  }

  /** The declared user_id, null without a user_context. */
  static String userId(Read r) {
    return r.hasUserContext ? USER_ID.value(r.values[USER]) : null;
  }

  static String userName(Read r) {
    return r.hasUserContext ? USER_NAME.value(r.values[USER_NAME_SLOT]) : null;
  }

  private boolean readString(CodedInputStream in, int tag, String[] values) throws IOException {
    for (int slot : STRING_SLOTS) {
      if (strings[slot].read(in, tag, values, slot)) return true;
    }
    return false;
  }

  private static void readUserContext(CodedInputStream in, String[] values) throws IOException {
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      if (!USER_ID.read(in, tag, values, USER)
          && !USER_NAME.read(in, tag, values, USER_NAME_SLOT)) {
        in.skipField(tag);
      }
    }
  }

  /**
   * Whether one RequestOption asks for a reattachable execution, as Spark asks it: {@code hasReattachOptions
   * && getReattachable}; the option's oneof keeps its last member, and reattach options given twice merge.
   */
  private static boolean reattachOption(CodedInputStream in) throws IOException {
    int member = 0;
    boolean reattachable = false;
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      if (tag == REATTACH_OPTIONS) {
        if (member != REATTACH_OPTIONS >>> 3) reattachable = false;
        member = REATTACH_OPTIONS >>> 3;
        int limit = in.pushLimit(in.readRawVarint32());
        for (int t = in.readTag(); t != 0; t = in.readTag()) {
          if (t == REATTACHABLE) reattachable = in.readBool();
          else in.skipField(t);
        }
        in.popLimit(limit);
      } else {
        if (isMember(tag, OPTION_MEMBERS)) member = WireFormat.getTagFieldNumber(tag);
        in.skipField(tag);
      }
    }
    return member == REATTACH_OPTIONS >>> 3 && reattachable;
  }

  private static void readPlan(CodedInputStream in, Read r) throws IOException {
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      if (tag == COMPRESSED) {
        if (r.planMember != COMPRESSED >>> 3) r.codec = 0;
        r.planMember = COMPRESSED >>> 3;
        int limit = in.pushLimit(in.readRawVarint32());
        for (int t = in.readTag(); t != 0; t = in.readTag()) {
          if (t == CODEC) r.codec = in.readEnum();
          else in.skipField(t);
        }
        in.popLimit(limit);
      } else {
        if (isMember(tag, PLAN_MEMBERS)) r.planMember = WireFormat.getTagFieldNumber(tag);
        in.skipField(tag);
      }
    }
  }

  /** The number of the last member of a message's one oneof that the message sets (merged with {@code last}). */
  private static int lastMember(CodedInputStream in, int[] members, int last) throws IOException {
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      if (isMember(tag, members)) last = WireFormat.getTagFieldNumber(tag);
      in.skipField(tag);
    }
    return last;
  }

  private static boolean isMember(int tag, int[] members) {
    for (int m : members) {
      if (m == tag) return true;
    }
    return false;
  }

  /** The tags of the members of a type's one real oneof. */
  private static int[] members(Descriptor type) {
    return type.getRealOneofs().get(0).getFields().stream()
        .mapToInt(HeadLayout::lengthDelimited)
        .toArray();
  }

  private static int fieldTag(Descriptor type, String name, Descriptor messageType) {
    FieldDescriptor f = type.findFieldByName(name);
    return f != null
            && f.getType() == FieldDescriptor.Type.MESSAGE
            && f.getMessageType() == messageType
        ? lengthDelimited(f)
        : 0;
  }

  private static int lengthDelimited(FieldDescriptor f) {
    return tag(f.getNumber(), WireFormat.WIRETYPE_LENGTH_DELIMITED);
  }

  private static int tag(int number, int wireType) {
    return number << 3 | wireType;
  }
}
