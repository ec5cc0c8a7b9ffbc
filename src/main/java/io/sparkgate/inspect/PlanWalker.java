package io.sparkgate.inspect;

import com.google.protobuf.Any;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MapEntry;
import com.google.protobuf.Message;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;

/**
 * Visits every message of a request with an explicit stack (a 100,000-deep plan cannot overflow the thread's
 * stack), checks oneof cases and unknown fields on each, and hands each message to the detectors. Walks a
 * parsed request, or the request's encoding, which spares parsing the messages no detector reads.
 */
final class PlanWalker {
  private final InspectorConfig config;
  private final Detectors detectors;
  private final FactSink sink;

  /**
   * What is left to visit: a frame, or (null here) a message of the encoding, described at the same index of
   * the arrays below. The encoding's messages get a frame only when a detector or a fact needs one. Sized
   * for the small requests that are nearly all calls (a walker per request: these arrays were most of the
   * 2 KB it allocated), they grow as a plan needs.
   */
  private Frame[] stack = new Frame[16];

  private int[] starts = new int[16];
  private int[] ends = new int[16];

  /** The field it is a value of (null for the root), and its index in a repeated field or -1. */
  private Slot[] slots = new Slot[16];

  private int[] indexes = new int[16];
  private int[] depths = new int[16];
  private int top;

  /**
   * The encoding's message being visited and its ancestors, by depth, with the frames built for them so far.
   * The walk is depth first, so the last message visited at each depth above the current one is its ancestor.
   */
  private int[] pathStarts = new int[8];

  private int[] pathEnds = new int[8];
  private Slot[] pathSlots = new Slot[8];
  private int[] pathIndexes = new int[8];
  private Frame[] pathFrames = new Frame[8];

  /** The present message-typed fields of the message being expanded, in field-number order. */
  private FieldDescriptor[] present = new FieldDescriptor[8];

  private final Wire wire = new Wire();

  /** The request walked by walkEncoded, its type, and how many of its bytes may still be parsed for detectors. */
  private byte[] encoding;

  private Shape root;
  private long parseBudget;

  /** Messages of the encoding parsed for detectors so far (tests check that common plans need none). */
  int parses;

  PlanWalker(InspectorConfig config, Detectors detectors, FactSink sink) {
    this.config = config;
    this.detectors = detectors;
    this.sink = sink;
  }

  void walk(Message root, String rootName, SessionView session) {
    push(new Frame(root, null, rootName, 0));
    visitAll(session);
  }

  /**
   * Walks a request from its encoding: each message's fields are read by {@link Wire} and only messages a
   * detector asks for are parsed. Reports exactly what {@link #walk} reports on the parsed request, or throws
   * {@link Wire.Unusual} (possibly after some facts) where the encoding is not one {@link Wire} accepts.
   */
  void walkEncoded(byte[] request, Shape root, SessionView session) {
    this.encoding = request;
    this.root = root;
    // Detectors parse few, small messages; a plan built to make them parse the same bytes again and
    // again (nested UDFs, each asking for its enclosing function) goes to the ordinary parse
    // instead.
    parseBudget = 2L * request.length;
    pushEncoded(0, request.length, null, -1, 0);
    visitAll(session);
  }

  private void visitAll(SessionView session) {
    while (top > 0) {
      int i = --top;
      Frame frame = stack[i];
      if (frame != null) {
        stack[i] = null;
        visit(frame, session);
      } else {
        visitEncoded(starts[i], ends[i], slots[i], indexes[i], depths[i], session);
      }
    }
  }

  /** Lets a detector add a message to the walk (a decompressed plan). */
  void push(Frame frame) {
    if (frame.depth > config.maxDepth()) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "plan_too_deep")
          .put("where", frame.path())
          .put("limit", config.maxDepth())
          .emit();
      return;
    }
    grow();
    stack[top++] = frame;
  }

  private void pushEncoded(int start, int end, Slot slot, int index, int depth) {
    grow();
    starts[top] = start;
    ends[top] = end;
    slots[top] = slot;
    indexes[top] = index;
    depths[top] = depth;
    top++;
  }

  private void grow() {
    if (top < stack.length) return;
    int n = top * 2;
    stack = Arrays.copyOf(stack, n);
    starts = Arrays.copyOf(starts, n);
    ends = Arrays.copyOf(ends, n);
    slots = Arrays.copyOf(slots, n);
    indexes = Arrays.copyOf(indexes, n);
    depths = Arrays.copyOf(depths, n);
  }

  private void visit(Frame frame, SessionView session) {
    Message m = frame.message();
    if (!m.getUnknownFields().isEmpty()) {
      // A field our protos do not know: a newer client, or bytes smuggled past the inspection.
      sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_field")
          .put("where", frame.path())
          .put("message", frame.type())
          .put("field_numbers", m.getUnknownFields().asMap().keySet().toString())
          .emit();
    }
    if (m instanceof Any any) {
      detectors.extension(any, frame, this);
      return;
    }
    for (OneofDescriptor oneof : frame.shape.reviewedOneofs) {
      FieldDescriptor set = m.getOneofFieldDescriptor(oneof);
      if (set != null && frame.shape.slot(set).unhandledCase) {
        sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_case")
            .put("where", frame.path())
            .put("oneof", oneof.getFullName())
            .put("case", set.getName())
            .emit();
      }
    }
    for (OneofDescriptor oneof : frame.shape.requiredOneofs) {
      if (m.getOneofFieldDescriptor(oneof) == null) noCase(frame, oneof);
    }
    for (FieldDescriptor field : frame.shape.requiredFields) {
      if (!m.hasField(field)) missingField(frame, field);
    }
    detectors.detect(frame, session, this);
    pushChildren(frame);
  }

  /** As visit, for a message of the encoding: the same checks and facts, in the same order. */
  private void visitEncoded(
      int start, int end, Slot slot, int index, int depth, SessionView session) {
    // This deep, leave it to protobuf's parse, whose failure past the bound is the fact
    // (Requests.parseFailure).
    if (depth >= config.maxDepth()) throw Wire.UNUSUAL;
    if (depth == pathFrames.length) growPath();
    pathStarts[depth] = start;
    pathEnds[depth] = end;
    pathSlots[depth] = slot;
    pathIndexes[depth] = index;
    pathFrames[depth] = null;
    Shape shape = slot == null ? root : slot.child;
    // A type with message-valued maps (a SQL relation's parameters) is walked from its parse, but
    // only when the message has map entries: most SQL relations have none, and their statement is
    // then read in place.
    if (!wire.scan(encoding, start, end, shape)) {
      visit(frame(depth), session);
      return;
    }
    if (shape.isAny) {
      detectors.extension((Any) frame(depth).message(), frame(depth), this);
      return;
    }
    for (OneofDescriptor oneof : shape.reviewedOneofs) {
      Slot set = wire.oneofCase(oneof);
      if (set != null && set.unhandledCase) {
        sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_case")
            .put("where", frame(depth).path())
            .put("oneof", oneof.getFullName())
            .put("case", set.field.getName())
            .emit();
      }
    }
    for (OneofDescriptor oneof : shape.requiredOneofs) {
      if (wire.oneofCase(oneof) == null) noCase(frame(depth), oneof);
    }
    for (FieldDescriptor field : shape.requiredFields) {
      if (!wire.saw(field)) missingField(frame(depth), field);
    }
    if (!shape.undetected && !detectors.detect(frame(depth), session, this))
      shape.undetected = true;
    // Pushed last first, as in pushChildren; Wire found them in field-number order.
    for (int i = wire.count - 1; i >= 0; i--) {
      pushEncoded(wire.starts[i], wire.ends[i], wire.slots[i], wire.indexes[i], depth + 1);
    }
  }

  /** A oneof that says what the server is to do, with no case set (Coverage.REQUIRED_ONEOFS). */
  private void noCase(Frame frame, OneofDescriptor oneof) {
    sink.fact(Fact.Kind.UNCLASSIFIED, "no_case")
        .put("where", frame.path())
        .put("oneof", oneof.getFullName())
        .emit();
  }

  /** A message field without which the server has nothing to do (Coverage.REQUIRED_FIELDS). */
  private void missingField(Frame frame, FieldDescriptor field) {
    sink.fact(Fact.Kind.UNCLASSIFIED, "missing_field")
        .put("where", frame.path())
        .put("field", field.getFullName())
        .emit();
  }

  /** The frame of the message at this depth of the current path, built (with its ancestors') on first use. */
  private Frame frame(int depth) {
    int built = depth;
    while (built >= 0 && pathFrames[built] == null) built--;
    for (int d = built + 1; d <= depth; d++) {
      Slot slot = pathSlots[d];
      pathFrames[d] =
          new Frame(
              this,
              pathStarts[d],
              pathEnds[d],
              slot == null ? root : slot.child,
              d == 0 ? null : pathFrames[d - 1],
              slot,
              pathIndexes[d],
              d);
    }
    return pathFrames[depth];
  }

  private void growPath() {
    int n = pathFrames.length * 2;
    pathStarts = Arrays.copyOf(pathStarts, n);
    pathEnds = Arrays.copyOf(pathEnds, n);
    pathSlots = Arrays.copyOf(pathSlots, n);
    pathIndexes = Arrays.copyOf(pathIndexes, n);
    pathFrames = Arrays.copyOf(pathFrames, n);
  }

  /**
   * The message of a frame read from the encoding: a singular field of a parent whose message was built
   * (a detected message in a detected message: Command and its write_operation, say) is taken from it;
   * anything else is parsed from its bytes as protobuf would have parsed them inside the request.
   */
  Message parse(Frame frame) {
    Frame parent = frame.parent;
    if (parent != null && parent.parsed() && frame.index < 0) {
      return (Message) parent.message().getField(frame.viaField);
    }
    parses++;
    parseBudget -= frame.end - frame.start;
    if (parseBudget < 0) throw Wire.UNUSUAL;
    CodedInputStream in =
        CodedInputStream.newInstance(encoding, frame.start, frame.end - frame.start);
    in.setRecursionLimit(config.maxDepth() - frame.depth);
    try {
      return frame.shape.parser.parseFrom(in);
    } catch (InvalidProtocolBufferException e) {
      throw Wire.UNUSUAL;
    }
  }

  /**
   * A string field of a message of the encoding, as {@link Proto#str} gives it on the parsed message. Every
   * frame of the encoding is on the walk's path, so {@link Wire} has accepted its message: the field occurs at
   * most once and is valid UTF-8.
   */
  String string(Frame frame, StringField field) {
    try {
      return field.readFrom(encoding, frame.start, frame.end);
    } catch (IOException e) {
      throw Wire.UNUSUAL; // not after Wire's scan; the request would go to protobuf's parse
    }
  }

  private void pushChildren(Frame frame) {
    Message m = frame.message();
    Shape shape = frame.shape;
    int n = 0;
    for (FieldDescriptor fd : shape.messageFields) {
      if (fd.isRepeated() ? m.getRepeatedFieldCount(fd) > 0 : m.hasField(fd)) n = insert(fd, n);
    }
    for (OneofDescriptor oneof : shape.messageOneofs) {
      FieldDescriptor fd = m.getOneofFieldDescriptor(oneof);
      if (fd != null && Shape.isMessage(fd)) n = insert(fd, n);
    }
    // Pushed last field first, so that they are visited, and their facts come out, in field-number
    // order.
    for (int i = n - 1; i >= 0; i--) {
      FieldDescriptor fd = present[i];
      Slot slot = shape.slot(fd);
      Shape child = slot.child;
      if (fd.isRepeated()) {
        List<?> values = (List<?>) m.getField(fd);
        for (int j = values.size() - 1; j >= 0; j--) {
          Object v = values.get(j);
          // A map field's children are its message values; its entries and scalar values are not
          // walked.
          Message value =
              v instanceof MapEntry<?, ?> entry
                  ? (entry.getValue() instanceof Message mv ? mv : null)
                  : (Message) v;
          if (value != null) push(new Frame(value, shapeOf(value, child), frame, slot, j));
        }
      } else {
        Message value = (Message) m.getField(fd);
        push(new Frame(value, shapeOf(value, child), frame, slot, -1));
      }
    }
  }

  /** The field's shape, unless the message is of another type (a map entry that is not a MapEntry). */
  private static Shape shapeOf(Message value, Shape expected) {
    return expected != null && value.getDescriptorForType() == expected.type
        ? expected
        : Shape.of(value);
  }

  /** Adds a field to {@code present[0..n)}, keeping it sorted by number; returns the new count. */
  private int insert(FieldDescriptor fd, int n) {
    if (n == present.length) present = Arrays.copyOf(present, n * 2);
    int i = n;
    while (i > 0 && present[i - 1].getNumber() > fd.getNumber()) {
      present[i] = present[i - 1];
      i--;
    }
    present[i] = fd;
    return n + 1;
  }
}
