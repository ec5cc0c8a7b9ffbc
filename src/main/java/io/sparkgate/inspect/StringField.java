package io.sparkgate.inspect;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.WireFormat;
import java.io.IOException;

/**
 * One singular string field, read from a message's encoding exactly as {@link Proto#str} reads it from the
 * parsed message: its tag, and whether protobuf tracks its presence. Used where building the message only
 * to read a string would cost more than the rest of the work (a request's head, a SQL statement).
 */
record StringField(int tag, boolean presence) {
  /** Absent: a field number no encoding carries, so it is never set and reads as null. */
  static final StringField NONE = new StringField(-1, false);

  /** The field of this name, NONE when the type has none, null when it is not a singular string. */
  static StringField of(Descriptor type, String name) {
    FieldDescriptor f = type.findFieldByName(name);
    return f == null ? NONE : of(f);
  }

  /** The field, or null when it is not a singular string that protobuf checks as UTF-8. */
  static StringField of(FieldDescriptor f) {
    if (f.isRepeated() || f.getType() != FieldDescriptor.Type.STRING || !f.needsUtf8Check())
      return null;
    return new StringField(
        f.getNumber() << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED, f.hasPresence());
  }

  /** Reads the value into {@code values[slot]} if {@code tag} is this field's (the last one wins, as in protobuf). */
  boolean read(CodedInputStream in, int tag, String[] values, int slot) throws IOException {
    if (tag != this.tag) return false;
    values[slot] = in.readStringRequireUtf8();
    return true;
  }

  /** The field's value in the message encoded at {@code buf[start, end)}, as {@link #value} gives it. */
  String readFrom(byte[] buf, int start, int end) throws IOException {
    String[] values = new String[1];
    CodedInputStream in = CodedInputStream.newInstance(buf, start, end - start);
    for (int t = in.readTag(); t != 0; t = in.readTag()) {
      if (!read(in, t, values, 0)) in.skipField(t);
    }
    return value(values[0]);
  }

  /** As {@link Proto#str}: null when unset, and when empty without presence (proto3's default). */
  String value(String read) {
    return read == null || (read.isEmpty() && !presence) ? null : read;
  }
}
