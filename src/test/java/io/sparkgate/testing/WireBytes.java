package io.sparkgate.testing;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Protobuf wire encoding written by hand, for requests the generated builders cannot make: fields repeated or
 * out of order, unknown fields, nesting deeper than protobuf-java would recurse, malformed bytes.
 */
public final class WireBytes {
  /** Wire type of a length-delimited field: a message, string or bytes. */
  public static final int LENGTH_DELIMITED = 2;

  private WireBytes() {}

  /** The parts one after another. */
  public static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  /** Field {@code number}, length-delimited, holding {@code payload}. */
  public static byte[] field(int number, byte[] payload) {
    return concat(header(number, payload.length), payload);
  }

  /**
   * The tag and length of a length-delimited field whose {@code length} bytes of payload follow: for building
   * deep nesting from the inside out without copying the payload at every level.
   */
  public static byte[] header(int number, long length) {
    return concat(varint((long) number << 3 | LENGTH_DELIMITED), varint(length));
  }

  /** Base-128 varint, least significant group first. */
  public static byte[] varint(long value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(10);
    long v = value;
    while ((v & ~0x7FL) != 0) {
      out.write((int) (v & 0x7F | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
    return out.toByteArray();
  }

  public static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
