package io.sparkgate.inspect;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import com.google.protobuf.WireFormat;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the walker needs to know about one message type, worked out once per type: descriptor lookups, oneof
 * review and field lists cost microseconds per message, which a 10,000-node plan multiplies into milliseconds.
 */
final class Shape {
  /** Field numbers up to this are looked up in an array; Spark's go up to 999. */
  private static final int DENSE_NUMBERS = 4096;
  /** Every type reachable from a request, linked at class initialisation. */
  private static final Map<Descriptor, Shape> KNOWN = build();
  /** Any other type (none is expected): worked out on first sight, its fields' shapes on use. */
  private static final Map<Descriptor, Shape> OTHERS = new ConcurrentHashMap<>();

  final Descriptor type;
  final Parser<? extends Message> parser;
  /** The simple name, which Detectors dispatches on. */
  final String name;
  final boolean isAny;
  /** Has a field named path, paths or options, which Detectors reads on any message. */
  final boolean pathFields;
  final boolean pipelineCommand;
  /**
   * Has a map field with message values. Those values are walked, and the parsed map (last entry of a key
   * wins, in first-insertion order) decides which: such a message is always walked from its parsed form.
   */
  final boolean messageMap;
  /** The oneofs Coverage reviews, in declaration order. */
  final OneofDescriptor[] reviewedOneofs;
  /** Message-typed fields outside real oneofs (repeated and map fields included). */
  final FieldDescriptor[] messageFields;
  /** Real oneofs with at least one message-typed case. */
  final OneofDescriptor[] messageOneofs;
  /** By field index. */
  private final Slot[] slots;
  /** By field number, up to DENSE_NUMBERS. */
  private final Slot[] byNumber;

  /** One field, with what the walker asks about it on every message worked out. */
  static final class Slot {
    final FieldDescriptor field;
    /** The wire type of its values. */
    final int wireType;
    /** Bit n set if Wire reads a value of wire type n as protobuf reads it: its own, and packed for a repeated scalar. */
    private final int wireTypes;
    final boolean repeated;
    /** What Wire does with a length-delimited value of it. */
    final Kind kind;
    /** The index of its real oneof among the message's oneofs, or -1. */
    final int oneof;
    /** A case of a reviewed oneof that Coverage does not handle. */
    final boolean unhandledCase;
    /** The shape of its messages: for a map field, of the message values if they are messages, else of its entries. */
    Shape child;

    enum Kind { MESSAGE, MAP, UTF8, BYTES, PACKED_VARINT, PACKED_FIXED32, PACKED_FIXED64, SCALAR }

    private Slot(FieldDescriptor f, boolean unhandledCase) {
      this.field = f;
      this.wireType = f.getLiteType().getWireType();
      this.repeated = f.isRepeated();
      this.oneof = f.getRealContainingOneof() == null ? -1 : f.getRealContainingOneof().getIndex();
      this.unhandledCase = unhandledCase;
      this.kind = f.isMapField() ? Kind.MAP
          : isMessage(f) ? Kind.MESSAGE
          : f.getType() == FieldDescriptor.Type.STRING ? (f.needsUtf8Check() ? Kind.UTF8 : Kind.BYTES)
          : f.getType() == FieldDescriptor.Type.BYTES ? Kind.BYTES
          : !f.isRepeated() || !f.isPackable() ? Kind.SCALAR
          : wireType == WireFormat.WIRETYPE_FIXED32 ? Kind.PACKED_FIXED32
          : wireType == WireFormat.WIRETYPE_FIXED64 ? Kind.PACKED_FIXED64 : Kind.PACKED_VARINT;
      // A closed enum's unknown values go to the unknown fields; Wire leaves such fields to protobuf.
      boolean closedEnum = f.getJavaType() == FieldDescriptor.JavaType.ENUM && f.legacyEnumFieldTreatedAsClosed();
      this.wireTypes = closedEnum ? 0
          : 1 << wireType | (kind == Kind.SCALAR ? 0 : 1 << WireFormat.WIRETYPE_LENGTH_DELIMITED);
    }

    boolean accepts(int wireType) {
      return (wireTypes >>> wireType & 1) != 0;
    }
  }

  private Shape(Message prototype) {
    this.type = prototype.getDescriptorForType();
    this.parser = prototype.getParserForType();
    this.name = type.getName();
    this.isAny = type.getFullName().equals(Any.getDescriptor().getFullName());
    this.pathFields = type.findFieldByName("path") != null || type.findFieldByName("paths") != null
        || type.findFieldByName("options") != null;
    this.pipelineCommand = type.getFullName().startsWith("spark.connect.PipelineCommand");
    this.messageMap = type.getFields().stream().anyMatch(f -> f.isMapField() && isMessage(mapValue(f)));
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
    Set<FieldDescriptor> unhandled = new HashSet<>();
    for (OneofDescriptor o : reviewed) {
      for (FieldDescriptor f : o.getFields()) if (!Coverage.isHandled(o.getFullName(), f.getName())) unhandled.add(f);
    }
    this.slots = type.getFields().stream().map(f -> new Slot(f, unhandled.contains(f))).toArray(Slot[]::new);
    int maxNumber = type.getFields().stream().mapToInt(FieldDescriptor::getNumber).max().orElse(0);
    this.byNumber = new Slot[Math.min(maxNumber, DENSE_NUMBERS) + 1];
    for (Slot slot : slots) if (slot.field.getNumber() <= DENSE_NUMBERS) byNumber[slot.field.getNumber()] = slot;
  }

  /** The shape of a message's type. */
  static Shape of(Message m) {
    Shape s = KNOWN.get(m.getDescriptorForType());
    return s != null ? s : OTHERS.computeIfAbsent(m.getDescriptorForType(), t -> new Shape(m.getDefaultInstanceForType()));
  }

  /** The slot of a field of this type. */
  Slot slot(FieldDescriptor field) {
    return slots[field.getIndex()];
  }

  /** The slot of the field with this number, or null for an unknown field. */
  Slot slot(int number) {
    if (number < byNumber.length) return byNumber[number];
    FieldDescriptor f = number > DENSE_NUMBERS ? type.findFieldByNumber(number) : null;
    return f == null ? null : slots[f.getIndex()];
  }

  static boolean isMessage(FieldDescriptor f) {
    return f.getJavaType() == FieldDescriptor.JavaType.MESSAGE;
  }

  private static FieldDescriptor mapValue(FieldDescriptor mapField) {
    return mapField.getMessageType().findFieldByName("value");
  }

  /**
   * From the prototypes of every request, the prototypes of their fields' types, so that each shape can parse
   * its messages; then each shape linked to its fields' shapes.
   */
  private static Map<Descriptor, Shape> build() {
    Map<Descriptor, Shape> shapes = new HashMap<>();
    Deque<Message> todo = new ArrayDeque<>(Requests.prototypes());
    while (!todo.isEmpty()) {
      Message proto = todo.pop();
      if (shapes.containsKey(proto.getDescriptorForType())) continue;
      shapes.put(proto.getDescriptorForType(), new Shape(proto));
      Message.Builder builder = proto.newBuilderForType();
      for (FieldDescriptor f : proto.getDescriptorForType().getFields()) {
        if (!isMessage(f)) continue;
        Message.Builder fieldBuilder = builder.newBuilderForField(f);
        todo.push(fieldBuilder.getDefaultInstanceForType());
        if (f.isMapField() && isMessage(mapValue(f))) {
          todo.push(fieldBuilder.newBuilderForField(mapValue(f)).getDefaultInstanceForType());
        }
      }
    }
    for (Shape s : shapes.values()) {
      for (Slot slot : s.slots) {
        FieldDescriptor f = slot.field;
        if (!isMessage(f)) continue;
        slot.child = shapes.get(f.isMapField() && isMessage(mapValue(f)) ? mapValue(f).getMessageType() : f.getMessageType());
      }
    }
    return Map.copyOf(shapes);
  }
}
