package io.sparkgate.inspect;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

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
   * wins, in first-insertion order) decides which: such a message is walked from its parsed form when one of
   * its maps has entries.
   */
  final boolean messageMap;

  /**
   * Set once a message of this type has shown that Detectors has nothing for the type (it dispatches on the
   * type alone); the walk from the encoding then passes its messages by. Learned, not listed, so that the
   * switch in Detectors stays the one list of detected types. A thread that has not seen it yet asks again.
   */
  boolean undetected;

  /** The oneofs Coverage reviews, in declaration order. */
  final OneofDescriptor[] reviewedOneofs;

  /** The oneofs Coverage requires a case of, in declaration order. */
  final OneofDescriptor[] requiredOneofs;

  /** The message fields Coverage requires, in declaration order. */
  final FieldDescriptor[] requiredFields;

  /** Message-typed fields outside real oneofs (repeated and map fields included). */
  final FieldDescriptor[] messageFields;

  /** Real oneofs with at least one message-typed case. */
  final OneofDescriptor[] messageOneofs;

  /** By field index. */
  private final Slot[] slots;

  /** By field number, up to DENSE_NUMBERS. */
  private final Slot[] byNumber;

  /** By field name: Detectors reads fields by name. */
  private final Map<String, Slot> byName;

  private Shape(Message prototype) {
    this.type = prototype.getDescriptorForType();
    this.parser = prototype.getParserForType();
    this.name = type.getName();
    this.isAny = type.getFullName().equals(Any.getDescriptor().getFullName());
    this.pathFields =
        type.findFieldByName("path") != null
            || type.findFieldByName("paths") != null
            || type.findFieldByName("location") != null
            || type.getFields().stream().anyMatch(f -> f.isMapField() && !isMessage(mapValue(f)));
    this.pipelineCommand = type.getFullName().startsWith("spark.connect.PipelineCommand");
    this.messageMap =
        type.getFields().stream().anyMatch(f -> f.isMapField() && isMessage(mapValue(f)));
    List<OneofDescriptor> reviewed = new ArrayList<>();
    List<OneofDescriptor> required = new ArrayList<>();
    List<OneofDescriptor> messageOneofs = new ArrayList<>();
    for (OneofDescriptor o : type.getRealOneofs()) {
      if (Coverage.REVIEWED_ONEOFS.contains(o.getFullName())) reviewed.add(o);
      if (Coverage.REQUIRED_ONEOFS.contains(o.getFullName())) required.add(o);
      if (o.getFields().stream().anyMatch(Shape::isMessage)) messageOneofs.add(o);
    }
    this.reviewedOneofs = reviewed.toArray(new OneofDescriptor[0]);
    this.requiredOneofs = required.toArray(new OneofDescriptor[0]);
    this.requiredFields =
        type.getFields().stream()
            .filter(f -> Coverage.REQUIRED_FIELDS.contains(f.getFullName()))
            .toArray(FieldDescriptor[]::new);
    this.messageOneofs = messageOneofs.toArray(new OneofDescriptor[0]);
    this.messageFields =
        type.getFields().stream()
            .filter(f -> isMessage(f) && f.getRealContainingOneof() == null)
            .toArray(FieldDescriptor[]::new);
    Set<FieldDescriptor> unhandled = new HashSet<>();
    for (OneofDescriptor o : reviewed) {
      for (FieldDescriptor f : o.getFields())
        if (!Coverage.isHandled(o.getFullName(), f.getName())) unhandled.add(f);
    }
    this.slots =
        type.getFields().stream().map(f -> new Slot(f, unhandled.contains(f))).toArray(Slot[]::new);
    int maxNumber = type.getFields().stream().mapToInt(FieldDescriptor::getNumber).max().orElse(0);
    this.byNumber = new Slot[Math.min(maxNumber, DENSE_NUMBERS) + 1];
    for (Slot slot : slots)
      if (slot.field.getNumber() <= DENSE_NUMBERS) byNumber[slot.field.getNumber()] = slot;
    this.byName =
        Arrays.stream(slots)
            .collect(Collectors.toUnmodifiableMap(slot -> slot.field.getName(), slot -> slot));
  }

  /** The shape of a message's type. */
  static Shape of(Message m) {
    Shape s = KNOWN.get(m.getDescriptorForType());
    return s != null
        ? s
        : OTHERS.computeIfAbsent(
            m.getDescriptorForType(), t -> new Shape(m.getDefaultInstanceForType()));
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

  /** The slot of the field with this name, or null. */
  Slot slot(String name) {
    return byName.get(name);
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
        boolean messageValues = f.isMapField() && isMessage(mapValue(f));
        slot.child = shapes.get(messageValues ? mapValue(f).getMessageType() : f.getMessageType());
      }
    }
    return Map.copyOf(shapes);
  }
}
