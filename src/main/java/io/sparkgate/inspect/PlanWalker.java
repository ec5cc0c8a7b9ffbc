package io.sparkgate.inspect;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.MapEntry;
import com.google.protobuf.Message;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/**
 * Visits every message of a request with an explicit stack (a 100,000-deep plan cannot overflow the thread's
 * stack), checks oneof cases and unknown fields on each, and hands each message to the detectors.
 */
final class PlanWalker {
  /** One message on the walk, with how it was reached. */
  record Frame(Message message, Frame parent, String field, int depth) {
    String path() {
      StringBuilder b = new StringBuilder();
      for (Frame f = this; f != null; f = f.parent) {
        if (f.field == null) continue;
        b.insert(0, b.length() == 0 ? f.field : f.field + ".");
      }
      return b.toString();
    }

    String type() {
      return message.getDescriptorForType().getFullName();
    }
  }

  private final InspectorConfig config;
  private final Detectors detectors;
  private final FactSink sink;
  private final Deque<Frame> stack = new ArrayDeque<>();

  PlanWalker(InspectorConfig config, Detectors detectors, FactSink sink) {
    this.config = config;
    this.detectors = detectors;
    this.sink = sink;
  }

  void walk(Message root, String rootName, SessionView session) {
    push(new Frame(root, null, rootName, 0));
    while (!stack.isEmpty()) {
      Frame frame = stack.pop();
      visit(frame, session);
    }
  }

  /** Lets a detector add a message to the walk (a decompressed plan). */
  void push(Frame frame) {
    if (frame.depth > config.maxDepth()) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "plan_too_deep").put("where", frame.path()).put("limit", config.maxDepth()).emit();
      return;
    }
    stack.push(frame);
  }

  private void visit(Frame frame, SessionView session) {
    Message m = frame.message;
    if (!m.getUnknownFields().asMap().isEmpty()) {
      // A field our protos do not know: a newer client, or bytes smuggled past the inspection.
      sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_field").put("where", frame.path()).put("message", frame.type())
          .put("field_numbers", m.getUnknownFields().asMap().keySet().toString()).emit();
    }
    if (m instanceof Any any) {
      detectors.extension(any, frame);
      return;
    }
    for (OneofDescriptor oneof : m.getDescriptorForType().getRealOneofs()) {
      if (!Coverage.REVIEWED_ONEOFS.contains(oneof.getFullName())) continue;
      FieldDescriptor set = m.getOneofFieldDescriptor(oneof);
      if (set != null && !Coverage.isHandled(oneof.getFullName(), set.getName())) {
        sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_case").put("where", frame.path())
            .put("oneof", oneof.getFullName()).put("case", set.getName()).emit();
      }
    }
    detectors.detect(frame, session, this);
    pushChildren(frame);
  }

  private void pushChildren(Frame frame) {
    Map<FieldDescriptor, Object> fields = frame.message.getAllFields();
    // Pushed in reverse so facts come out in field order.
    Object[] entries = fields.entrySet().toArray();
    for (int i = entries.length - 1; i >= 0; i--) {
      @SuppressWarnings("unchecked")
      Map.Entry<FieldDescriptor, Object> e = (Map.Entry<FieldDescriptor, Object>) entries[i];
      FieldDescriptor fd = e.getKey();
      if (fd.getJavaType() != FieldDescriptor.JavaType.MESSAGE) continue;
      if (fd.isRepeated()) {
        List<?> values = (List<?>) e.getValue();
        for (int j = values.size() - 1; j >= 0; j--) {
          Object v = values.get(j);
          Message child = v instanceof MapEntry<?, ?> entry && entry.getValue() instanceof Message mv ? mv
              : v instanceof Message mm && !(v instanceof MapEntry<?, ?>) ? mm : null;
          if (child != null) push(new Frame(child, frame, fd.getName() + "[" + j + "]", frame.depth + 1));
        }
      } else {
        push(new Frame((Message) e.getValue(), frame, fd.getName(), frame.depth + 1));
      }
    }
  }
}
