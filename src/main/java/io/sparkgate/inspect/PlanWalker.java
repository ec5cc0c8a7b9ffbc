package io.sparkgate.inspect;

import com.google.protobuf.Any;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MapEntry;
import com.google.protobuf.Message;
import java.util.Arrays;
import java.util.List;

/**
 * Visits every message of a request with an explicit stack (a 100,000-deep plan cannot overflow the thread's
 * stack), checks oneof cases and unknown fields on each, and hands each message to the detectors. Walks a
 * parsed request, or the request's encoding, which spares parsing the messages no detector reads.
 */
final class PlanWalker {
  /**
   * One message on the walk and how it was reached. Its path is built only when a fact needs it. A frame read
   * from the request's encoding (see {@link #walkEncoded}) builds its message only when a detector asks.
   */
  static final class Frame {
    private Message message;
    /** For a frame read from the encoding: the walker that read it, and where its bytes are; else null. */
    private final PlanWalker walker;
    private final int start;
    private final int end;
    private final Shape shape;
    private final Frame parent;
    /** The field it was reached through, or null with a {@code name} (the root, an inflated plan). */
    private final FieldDescriptor field;
    private final String name;
    /** Its index in a repeated or map field, or -1. */
    private final int index;
    private final int depth;
    private String path;

    Frame(Message message, Frame parent, String name, int depth) {
      this(message, null, 0, 0, Shape.of(message), parent, null, name, -1, depth);
    }

    private Frame(Message message, PlanWalker walker, int start, int end, Shape shape, Frame parent,
        FieldDescriptor field, String name, int index, int depth) {
      this.message = message;
      this.walker = walker;
      this.start = start;
      this.end = end;
      this.shape = shape;
      this.parent = parent;
      this.field = field;
      this.name = name;
      this.index = index;
      this.depth = depth;
    }

    Message message() {
      if (message == null) message = walker.parse(this);
      return message;
    }

    Frame parent() {
      return parent;
    }

    int depth() {
      return depth;
    }

    Shape shape() {
      return shape;
    }

    /** The message's simple type name. */
    String typeName() {
      return shape.name;
    }

    /** The message's full type name. */
    String type() {
      return shape.type.getFullName();
    }

    /** How the parent holds it: a field name, with the index for a repeated field. */
    String field() {
      if (field == null) return name;
      return index < 0 ? field.getName() : field.getName() + "[" + index + "]";
    }

    /** The dotted path from the root, e.g. plan.root.project.input.read. */
    String path() {
      if (path == null) {
        int n = 0;
        for (Frame f = this; f != null; f = f.parent) if (f.field() != null) n++;
        String[] parts = new String[n];
        for (Frame f = this; f != null; f = f.parent) if (f.field() != null) parts[--n] = f.field();
        path = String.join(".", parts);
      }
      return path;
    }
  }

  private final InspectorConfig config;
  private final Detectors detectors;
  private final FactSink sink;
  private Frame[] stack = new Frame[64];
  private int top;
  /** The present message-typed fields of the message being expanded, in field-number order. */
  private FieldDescriptor[] present = new FieldDescriptor[8];
  private final Wire wire = new Wire();
  /** The request walked by walkEncoded, and how many of its bytes may still be parsed for detectors. */
  private byte[] encoding;
  private long parseBudget;

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
    encoding = request;
    // Detectors parse few, small messages; a plan built to make them parse the same bytes again and again
    // (nested UDFs, each asking for its enclosing function) goes to the ordinary parse instead.
    parseBudget = 2L * request.length;
    push(new Frame(null, this, 0, request.length, root, null, null, null, -1, 0));
    visitAll(session);
  }

  private void visitAll(SessionView session) {
    while (top > 0) {
      Frame frame = stack[--top];
      stack[top] = null;
      visit(frame, session);
    }
  }

  /** Lets a detector add a message to the walk (a decompressed plan). */
  void push(Frame frame) {
    if (frame.depth > config.maxDepth()) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "plan_too_deep").put("where", frame.path()).put("limit", config.maxDepth()).emit();
      return;
    }
    stackPush(frame);
  }

  private void visit(Frame frame, SessionView session) {
    if (frame.walker != null) {
      // This deep, leave it to protobuf's parse, whose failure past the bound is the fact (Requests.parseFailure).
      if (frame.depth >= config.maxDepth()) throw Wire.UNUSUAL;
      if (!frame.shape.messageMap) {
        visitEncoded(frame, session);
        return;
      }
    }
    Message m = frame.message();
    if (!m.getUnknownFields().isEmpty()) {
      // A field our protos do not know: a newer client, or bytes smuggled past the inspection.
      sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_field").put("where", frame.path()).put("message", frame.type())
          .put("field_numbers", m.getUnknownFields().asMap().keySet().toString()).emit();
    }
    if (m instanceof Any any) {
      detectors.extension(any, frame);
      return;
    }
    for (OneofDescriptor oneof : frame.shape.reviewedOneofs) {
      FieldDescriptor set = m.getOneofFieldDescriptor(oneof);
      if (set != null && frame.shape.slot(set).unhandledCase) {
        sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_case").put("where", frame.path())
            .put("oneof", oneof.getFullName()).put("case", set.getName()).emit();
      }
    }
    detectors.detect(frame, session, this);
    pushChildren(frame);
  }

  /** As visit, for a message read from the encoding: the same checks and facts, in the same order. */
  private void visitEncoded(Frame frame, SessionView session) {
    Shape shape = frame.shape;
    wire.scan(encoding, frame.start, frame.end, shape);
    if (shape.isAny) {
      detectors.extension((Any) frame.message(), frame);
      return;
    }
    for (OneofDescriptor oneof : shape.reviewedOneofs) {
      Shape.Slot set = wire.oneofCase(oneof);
      if (set != null && set.unhandledCase) {
        sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_case").put("where", frame.path())
            .put("oneof", oneof.getFullName()).put("case", set.field.getName()).emit();
      }
    }
    detectors.detect(frame, session, this);
    // Pushed last first, as in pushChildren; Wire found them in field-number order.
    for (int i = wire.count - 1; i >= 0; i--) {
      Shape.Slot f = wire.slots[i];
      stackPush(new Frame(null, this, wire.starts[i], wire.ends[i], f.child, frame, f.field, null, wire.indexes[i],
          frame.depth + 1));
    }
  }

  /**
   * The message of a frame read from the encoding: a singular field of a parent whose message was built
   * (a detected message in a detected message: Command and its write_operation, say) is taken from it;
   * anything else is parsed from its bytes as protobuf would have parsed them inside the request.
   */
  private Message parse(Frame frame) {
    Frame parent = frame.parent;
    if (parent != null && parent.message != null && frame.index < 0) return (Message) parent.message.getField(frame.field);
    parseBudget -= frame.end - frame.start;
    if (parseBudget < 0) throw Wire.UNUSUAL;
    CodedInputStream in = CodedInputStream.newInstance(encoding, frame.start, frame.end - frame.start);
    in.setRecursionLimit(config.maxDepth() - frame.depth);
    try {
      return frame.shape.parser.parseFrom(in);
    } catch (InvalidProtocolBufferException e) {
      throw Wire.UNUSUAL;
    }
  }

  private void pushChildren(Frame frame) {
    Message m = frame.message;
    Shape shape = frame.shape;
    int n = 0;
    for (FieldDescriptor fd : shape.messageFields) {
      if (fd.isRepeated() ? m.getRepeatedFieldCount(fd) > 0 : m.hasField(fd)) n = insert(fd, n);
    }
    for (OneofDescriptor oneof : shape.messageOneofs) {
      FieldDescriptor fd = m.getOneofFieldDescriptor(oneof);
      if (fd != null && Shape.isMessage(fd)) n = insert(fd, n);
    }
    // Pushed last field first, so that they are visited, and their facts come out, in field-number order.
    for (int i = n - 1; i >= 0; i--) {
      FieldDescriptor fd = present[i];
      Shape child = shape.slot(fd).child;
      if (fd.isRepeated()) {
        List<?> values = (List<?>) m.getField(fd);
        for (int j = values.size() - 1; j >= 0; j--) {
          Object v = values.get(j);
          // A map field's children are its message values; its entries and scalar values are not walked.
          Message value = v instanceof MapEntry<?, ?> entry ? (entry.getValue() instanceof Message mv ? mv : null) : (Message) v;
          if (value != null) push(new Frame(value, null, 0, 0, shapeOf(value, child), frame, fd, null, j, frame.depth + 1));
        }
      } else {
        Message value = (Message) m.getField(fd);
        push(new Frame(value, null, 0, 0, shapeOf(value, child), frame, fd, null, -1, frame.depth + 1));
      }
    }
  }

  /** The field's shape, unless the message is of another type (a map entry that is not a MapEntry). */
  private static Shape shapeOf(Message value, Shape expected) {
    return expected != null && value.getDescriptorForType() == expected.type ? expected : Shape.of(value);
  }

  private void stackPush(Frame frame) {
    if (top == stack.length) stack = Arrays.copyOf(stack, top * 2);
    stack[top++] = frame;
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
