package io.sparkgate.inspect;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.UnsafeByteOperations;
import com.google.protobuf.WireFormat;
import java.util.Arrays;

/**
 * Reads one message's fields from its protobuf encoding, without building it. Accepts only what protobuf-java
 * would parse to the same fields in the same order: every field known and with its declared wire type, field
 * numbers increasing (a repeated field's values together), a singular field and a oneof at most once (protobuf
 * would merge or drop the others), strings valid UTF-8, lengths and varints well formed. Encoders write
 * exactly that. Anything else throws {@link #UNUSUAL}, and the request is parsed by protobuf-java instead.
 *
 * <p>Positions are passed around as ints rather than kept in a field, and one-byte tags, lengths and varints
 * (nearly all of them) are read inline: this runs once per message of a plan.
 */
final class Wire {
  /** An encoding outside what {@link Wire} accepts; not an error. Thrown without a stack trace, it is cheap. */
  static final class Unusual extends RuntimeException {
    private Unusual() {
      super("unusual encoding", null, false, false);
    }
  }

  static final Unusual UNUSUAL = new Unusual();

  /** How many message-typed values the last {@link #scan} found; their field, tag offset, byte range and index. */
  int count;

  Slot[] slots = new Slot[8];
  int[] tags = new int[8];
  int[] starts = new int[8];
  int[] ends = new int[8];

  /** The value's index in a repeated field, or -1. */
  int[] indexes = new int[8];

  /** The set case of each oneof the last scan saw. */
  private Slot[] cases = new Slot[4];

  private int caseCount;

  /**
   * Reads the fields of a message of this shape from {@code buf[start, end)}. False, part way, at a map field
   * of a type with message-valued maps ({@link Shape#messageMap}): such a message is walked from its parse.
   */
  boolean scan(byte[] buf, int start, int end, Shape shape) {
    count = 0;
    caseCount = 0;
    int last = 0;
    int run = 0;
    long oneofsSeen = 0;
    int p = start;
    while (p < end) {
      int at = p;
      int tag = buf[p];
      if (tag >= 0) {
        p++;
      } else {
        long r = varint32(buf, p, end);
        tag = (int) (r >>> 32);
        p = (int) r;
      }
      int number = tag >>> 3;
      int wireType = tag & 7;
      Slot f = number == 0 ? null : shape.slot(number);
      if (f == null || !f.accepts(wireType)) throw UNUSUAL;
      if (number < last || (number == last && !f.repeated)) throw UNUSUAL;
      run = number == last ? run + 1 : 0;
      last = number;
      if (f.oneof >= 0) {
        if (f.oneof >= Long.SIZE || (oneofsSeen & 1L << f.oneof) != 0) throw UNUSUAL;
        oneofsSeen |= 1L << f.oneof;
        if (caseCount == cases.length) cases = Arrays.copyOf(cases, caseCount * 2);
        cases[caseCount++] = f;
      }
      switch (wireType) {
        case WireFormat.WIRETYPE_VARINT -> p = varint(buf, p, end);
        case WireFormat.WIRETYPE_FIXED64 -> p = skip(p, 8, end);
        case WireFormat.WIRETYPE_FIXED32 -> p = skip(p, 4, end);
        case WireFormat.WIRETYPE_LENGTH_DELIMITED -> {
          int from;
          int length;
          if (p < end && buf[p] >= 0) {
            length = buf[p];
            from = p + 1;
          } else {
            long r = varint32(buf, p, end);
            length = (int) (r >>> 32);
            from = (int) r;
          }
          if (length < 0 || length > end - from) throw UNUSUAL;
          p = from + length;
          switch (f.kind) {
            case MESSAGE -> add(f, at, from, p, f.repeated ? run : -1);
            case MAP -> {
              // Maps with message values are walked from the parsed message (see Shape.messageMap).
              if (shape.messageMap) return false;
              entry(buf, f.child, from, p);
            }
            case UTF8 -> utf8(buf, from, p);
            case BYTES -> {}
            default -> packed(buf, f.kind, from, p);
          }
        }
        default -> throw UNUSUAL;
      }
    }
    return true;
  }

  /** Whether the last scan saw a message-typed field. */
  boolean saw(FieldDescriptor field) {
    for (int i = 0; i < count; i++) if (slots[i].field == field) return true;
    return false;
  }

  /** The case of this oneof the last scan saw, or null. */
  Slot oneofCase(OneofDescriptor oneof) {
    for (int i = 0; i < caseCount; i++) if (cases[i].oneof == oneof.getIndex()) return cases[i];
    return null;
  }

  /** A map entry with a scalar value: key 1 and value 2, each at most once and in that order. */
  private static void entry(byte[] buf, Shape entry, int start, int end) {
    int last = 0;
    int p = start;
    while (p < end) {
      long r = varint32(buf, p, end);
      int tag = (int) (r >>> 32);
      p = (int) r;
      Slot f = entry.slot(tag >>> 3);
      if (f == null || tag >>> 3 <= last || !f.accepts(tag & 7) || f.kind == Slot.Kind.MESSAGE)
        throw UNUSUAL;
      last = tag >>> 3;
      switch (tag & 7) {
        case WireFormat.WIRETYPE_VARINT -> p = varint(buf, p, end);
        case WireFormat.WIRETYPE_FIXED64 -> p = skip(p, 8, end);
        case WireFormat.WIRETYPE_FIXED32 -> p = skip(p, 4, end);
        case WireFormat.WIRETYPE_LENGTH_DELIMITED -> {
          r = varint32(buf, p, end);
          int length = (int) (r >>> 32);
          p = (int) r;
          if (length < 0 || length > end - p) throw UNUSUAL;
          if (f.kind == Slot.Kind.UTF8) utf8(buf, p, p + length);
          p += length;
        }
        default -> throw UNUSUAL;
      }
    }
  }

  /** A packed repeated scalar: whole fixed-size values, or varints that end inside it. */
  private static void packed(byte[] buf, Slot.Kind kind, int start, int end) {
    switch (kind) {
      case PACKED_FIXED64 -> {
        if ((end - start) % 8 != 0) throw UNUSUAL;
      }
      case PACKED_FIXED32 -> {
        if ((end - start) % 4 != 0) throw UNUSUAL;
      }
      case PACKED_VARINT -> {
        for (int p = start; p < end; ) p = varint(buf, p, end);
      }
      default -> throw UNUSUAL;
    }
  }

  private void add(Slot f, int tag, int start, int end, int index) {
    if (count == slots.length) {
      slots = Arrays.copyOf(slots, count * 2);
      tags = Arrays.copyOf(tags, count * 2);
      starts = Arrays.copyOf(starts, count * 2);
      ends = Arrays.copyOf(ends, count * 2);
      indexes = Arrays.copyOf(indexes, count * 2);
    }
    slots[count] = f;
    tags[count] = tag;
    starts[count] = start;
    ends[count] = end;
    indexes[count] = index;
    count++;
  }

  /**
   * An unsigned varint of at most 5 bytes and 32 bits, for tags and lengths (protobuf also takes padded ones;
   * encoders do not write them): the value in the high half, the position after it in the low half.
   */
  private static long varint32(byte[] buf, int p, int end) {
    long v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (p >= end) throw UNUSUAL;
      byte b = buf[p++];
      v |= (long) (b & 0x7f) << shift;
      if (b >= 0) {
        if (v > 0xffffffffL) break;
        return v << 32 | p;
      }
    }
    throw UNUSUAL;
  }

  /** The position after a varint value, which protobuf reads from at most 10 bytes. */
  private static int varint(byte[] buf, int p, int end) {
    int limit = end - p > 10 ? p + 10 : end;
    while (p < limit) {
      if (buf[p++] >= 0) return p;
    }
    throw UNUSUAL;
  }

  private static int skip(int p, int n, int end) {
    if (n > end - p) throw UNUSUAL;
    return p + n;
  }

  /** Valid UTF-8, as protobuf checks it for proto3 strings (ASCII, the usual case, without a copy). */
  private static void utf8(byte[] buf, int start, int end) {
    for (int i = start; i < end; i++) {
      if (buf[i] < 0) {
        if (!UnsafeByteOperations.unsafeWrap(buf, start, end - start).isValidUtf8()) throw UNUSUAL;
        return;
      }
    }
  }
}
