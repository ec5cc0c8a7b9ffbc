package io.sparkgate.inspect;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;

/**
 * One message on the walk and how it was reached. Its path is built only when a fact needs it. A frame of a
 * request's encoding (see {@link PlanWalker#walkEncoded}) parses its message only when a detector asks.
 */
final class Frame {
  private Message message;

  /** For a frame of the encoding: the walker that read it, and where its bytes are; else null. */
  final PlanWalker walker;

  final int start;
  final int end;
  final Shape shape;
  final Frame parent;

  /** The field of the parent it is a value of, or null (the root, an inflated plan). */
  final FieldDescriptor viaField;

  /** The field's name, or the frame's own name where there is no field. */
  private final String name;

  /** Its index in a repeated or map field, or -1. */
  final int index;

  final int depth;
  private String path;

  /** A parsed message not held by a field: the request, an inflated plan. */
  Frame(Message message, Frame parent, String name, int depth) {
    this(message, null, 0, 0, Shape.of(message), parent, null, name, -1, depth);
  }

  /** A parsed message held by its parent's field. */
  Frame(Message message, Shape shape, Frame parent, Slot via, int index) {
    this(message, null, 0, 0, shape, parent, via.field, via.name, index, parent.depth + 1);
  }

  /** A message of the encoding, at {@code [start, end)}; for the root ({@code via} null), without parent or field. */
  Frame(
      PlanWalker walker,
      int start,
      int end,
      Shape shape,
      Frame parent,
      Slot via,
      int index,
      int depth) {
    this(
        null,
        walker,
        start,
        end,
        shape,
        parent,
        via == null ? null : via.field,
        via == null ? null : via.name,
        index,
        depth);
  }

  private Frame(
      Message message,
      PlanWalker walker,
      int start,
      int end,
      Shape shape,
      Frame parent,
      FieldDescriptor viaField,
      String name,
      int index,
      int depth) {
    this.message = message;
    this.walker = walker;
    this.start = start;
    this.end = end;
    this.shape = shape;
    this.parent = parent;
    this.viaField = viaField;
    this.name = name;
    this.index = index;
    this.depth = depth;
  }

  Message message() {
    if (message == null) message = walker.parse(this);
    return message;
  }

  /**
   * A singular string or scalar field as text, as {@link Proto#str} reads it from the message. A string of a
   * message of the encoding is read where it lies, without parsing the message: a SQL relation's statement and
   * a function's name are read on nearly every call, and building the message to read one field through
   * protobuf's reflection ran more code than the rest of a small plan's walk.
   */
  String str(String name) {
    Slot slot = message == null && walker != null ? shape.slot(name) : null;
    if (slot == null || slot.string == null) return Proto.str(message(), name);
    return walker.string(this, slot.string);
  }

  /** True if the message is at hand, without parsing. */
  boolean parsed() {
    return message != null;
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
    return index < 0 || name == null ? name : name + "[" + index + "]";
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
