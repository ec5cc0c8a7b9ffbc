package io.sparkgate.inspect;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.WireFormat;

/** One field of a message type, with what the walk asks about it on every message worked out. */
final class Slot {
  final FieldDescriptor field;

  /** The field's name, kept here: paths name fields, and the descriptor's copy is three loads away. */
  final String name;

  final boolean repeated;

  /** What Wire does with a length-delimited value of it. */
  final Kind kind;

  /** How to read it from an encoding, for a singular string field; else null. */
  final StringField string;

  /** The index of its real oneof among the message's oneofs, or -1. */
  final int oneof;

  /** A case of a reviewed oneof that Coverage does not handle. */
  final boolean unhandledCase;

  /** Bit n set if Wire reads a value of wire type n as protobuf reads it: its own, and packed for a repeated scalar. */
  private final int wireTypes;

  /** The shape of its messages: for a map field, of its values if they are messages, else of its entries. */
  Shape child;

  enum Kind {
    MESSAGE,
    MAP,
    UTF8,
    BYTES,
    PACKED_VARINT,
    PACKED_FIXED32,
    PACKED_FIXED64,
    SCALAR
  }

  Slot(FieldDescriptor f, boolean unhandledCase) {
    this.field = f;
    this.name = f.getName();
    this.repeated = f.isRepeated();
    this.string = StringField.of(f);
    this.oneof = f.getRealContainingOneof() == null ? -1 : f.getRealContainingOneof().getIndex();
    this.unhandledCase = unhandledCase;
    int wireType = f.getLiteType().getWireType();
    this.kind =
        f.isMapField()
            ? Kind.MAP
            : Shape.isMessage(f)
                ? Kind.MESSAGE
                : f.getType() == FieldDescriptor.Type.STRING
                    ? (f.needsUtf8Check() ? Kind.UTF8 : Kind.BYTES)
                    : f.getType() == FieldDescriptor.Type.BYTES
                        ? Kind.BYTES
                        : !f.isRepeated() || !f.isPackable()
                            ? Kind.SCALAR
                            : wireType == WireFormat.WIRETYPE_FIXED32
                                ? Kind.PACKED_FIXED32
                                : wireType == WireFormat.WIRETYPE_FIXED64
                                    ? Kind.PACKED_FIXED64
                                    : Kind.PACKED_VARINT;
    // A closed enum's unknown values go to the unknown fields; Wire leaves such fields to protobuf.
    boolean closedEnum =
        f.getJavaType() == FieldDescriptor.JavaType.ENUM && f.legacyEnumFieldTreatedAsClosed();
    this.wireTypes =
        closedEnum
            ? 0
            : 1 << wireType | (kind == Kind.SCALAR ? 0 : 1 << WireFormat.WIRETYPE_LENGTH_DELIMITED);
  }

  boolean accepts(int wireType) {
    return (wireTypes >>> wireType & 1) != 0;
  }
}
