package io.sparkgate.inspect;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import io.sparkgate.proto.spark.Base;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the walker needs to know about one message type, worked out once per type: descriptor lookups, oneof
 * review and field lists cost microseconds per message, which a 10,000-node plan multiplies into milliseconds.
 */
final class Shape {
  /** Every type reachable from a request or a compressed plan, linked at class initialisation. */
  private static final Map<Descriptor, Shape> KNOWN = build();
  /** Any other type (none is expected): worked out on first sight, its fields' shapes on use. */
  private static final Map<Descriptor, Shape> OTHERS = new ConcurrentHashMap<>();

  final Descriptor type;
  /** The simple name, which Detectors dispatches on. */
  final String name;
  final boolean isAny;
  /** Has a field named path, paths or options, which Detectors reads on any message. */
  final boolean pathFields;
  final boolean pipelineCommand;
  /** The oneofs Coverage reviews, in declaration order. */
  final OneofDescriptor[] reviewedOneofs;
  /** Message-typed fields outside real oneofs (repeated and map fields included). */
  final FieldDescriptor[] messageFields;
  /** Real oneofs with at least one message-typed case. */
  final OneofDescriptor[] messageOneofs;
  /** By field index: true for a case of a reviewed oneof that Coverage does not handle. */
  private final boolean[] unhandledCase;
  /** By field index: the shape of a message-typed field, or of a map field's value. */
  private final Shape[] children;

  private Shape(Descriptor type) {
    this.type = type;
    this.name = type.getName();
    this.isAny = type.getFullName().equals(Any.getDescriptor().getFullName());
    this.pathFields = type.findFieldByName("path") != null || type.findFieldByName("paths") != null
        || type.findFieldByName("options") != null;
    this.pipelineCommand = type.getFullName().startsWith("spark.connect.PipelineCommand");
    List<OneofDescriptor> reviewed = new ArrayList<>();
    List<OneofDescriptor> messageOneofs = new ArrayList<>();
    for (OneofDescriptor o : type.getRealOneofs()) {
      if (Coverage.REVIEWED_ONEOFS.contains(o.getFullName())) reviewed.add(o);
      if (o.getFields().stream().anyMatch(Shape::isMessage)) messageOneofs.add(o);
    }
    this.reviewedOneofs = reviewed.toArray(new OneofDescriptor[0]);
    this.messageOneofs = messageOneofs.toArray(new OneofDescriptor[0]);
    this.messageFields = type.getFields().stream()
        .filter(f -> isMessage(f) && f.getRealContainingOneof() == null).toArray(FieldDescriptor[]::new);
    this.unhandledCase = new boolean[type.getFields().size()];
    for (OneofDescriptor o : reviewed) {
      for (FieldDescriptor f : o.getFields()) unhandledCase[f.getIndex()] = !Coverage.isHandled(o.getFullName(), f.getName());
    }
    this.children = new Shape[type.getFields().size()];
  }

  static Shape of(Descriptor type) {
    Shape s = KNOWN.get(type);
    return s != null ? s : OTHERS.computeIfAbsent(type, Shape::new);
  }

  /** The shape of the messages a message-typed field holds. */
  Shape child(FieldDescriptor field) {
    Shape s = children[field.getIndex()];
    return s != null ? s : of(valueType(field));
  }

  boolean unhandledCase(FieldDescriptor field) {
    return unhandledCase[field.getIndex()];
  }

  static boolean isMessage(FieldDescriptor f) {
    return f.getJavaType() == FieldDescriptor.JavaType.MESSAGE;
  }

  /** A field's message type; for a map field, its value's type (the walker steps over the entry). */
  private static Descriptor valueType(FieldDescriptor f) {
    Descriptor t = f.getMessageType();
    if (!f.isMapField()) return t;
    FieldDescriptor value = t.findFieldByName("value");
    return isMessage(value) ? value.getMessageType() : t;
  }

  private static Map<Descriptor, Shape> build() {
    Map<Descriptor, Shape> shapes = new HashMap<>();
    Deque<Descriptor> todo = new ArrayDeque<>();
    Base.getDescriptor().findServiceByName("SparkConnectService").getMethods().forEach(m -> todo.add(m.getInputType()));
    while (!todo.isEmpty()) {
      Descriptor d = todo.pop();
      if (shapes.containsKey(d)) continue;
      shapes.put(d, new Shape(d));
      for (FieldDescriptor f : d.getFields()) {
        if (isMessage(f)) todo.push(f.getMessageType());
        if (f.isMapField() && isMessage(f.getMessageType().findFieldByName("value"))) todo.push(valueType(f));
      }
    }
    for (Shape s : shapes.values()) {
      for (FieldDescriptor f : s.type.getFields()) {
        if (isMessage(f)) s.children[f.getIndex()] = shapes.get(valueType(f));
      }
    }
    return Map.copyOf(shapes);
  }
}
