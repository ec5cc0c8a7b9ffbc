package io.sparkgate.audit;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.WireFormat;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Reads a few top-level string fields (session id, operation id, client type ...) of a Spark Connect
 * message without parsing it: other fields, a plan of any size included, are skipped in place.
 */
final class WireScanner {
  /** What a stream-backed scan reads ahead: the fields it wants sit among a few short ones. */
  private static final int STREAM_BUFFER_BYTES = 256;
  private final Map<Integer, String> wanted = new HashMap<>();

  /** Scans for the fields of {@code type} with these names that exist in it, e.g. "operation_id". */
  WireScanner(Descriptor type, Set<String> names) {
    this(type, names, "");
  }

  /**
   * As {@link #WireScanner(Descriptor, Set)}, reporting each field as {@code prefix + name} (made once here,
   * not per call).
   */
  WireScanner(Descriptor type, Set<String> names, String prefix) {
    for (FieldDescriptor field : type.getFields()) {
      if (names.contains(field.getName()) && field.getType() == FieldDescriptor.Type.STRING && !field.isRepeated()) {
        wanted.put(field.getNumber(), prefix + field.getName());
      }
    }
  }

  /** The wanted fields present in {@code message}, by name; a malformed message yields what was read. */
  Map<String, String> scan(byte[] message) {
    return scan(CodedInputStream.newInstance(message));
  }

  /** As {@link #scan(byte[])}, from a stream; large fields are skipped, not read. */
  Map<String, String> scan(InputStream message) {
    return scan(CodedInputStream.newInstance(message, STREAM_BUFFER_BYTES));
  }

  private Map<String, String> scan(CodedInputStream in) {
    Map<String, String> out = new HashMap<>();
    try {
      while (true) {
        int tag = in.readTag();
        if (tag == 0) {
          return out;
        }
        String name = wanted.get(WireFormat.getTagFieldNumber(tag));
        if (name != null && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          out.put(name, in.readString());
        } else if (!in.skipField(tag)) {
          return out;
        }
      }
    } catch (IOException e) {
      // The inspector reports malformed requests; the audit record keeps whatever could be read.
      return out;
    }
  }

  /** Row count of an ExecutePlanResponse's arrow batch (field numbers from the descriptor), else 0. */
  static long arrowRows(byte[] message, int arrowBatchField, int rowCountField) {
    return arrowRows(CodedInputStream.newInstance(message), arrowBatchField, rowCountField);
  }

  /** As {@link #arrowRows(byte[], int, int)}, from a stream: reads the few bytes before the row count. */
  static long arrowRows(InputStream message, int arrowBatchField, int rowCountField) {
    return arrowRows(CodedInputStream.newInstance(message, STREAM_BUFFER_BYTES), arrowBatchField, rowCountField);
  }

  private static long arrowRows(CodedInputStream in, int arrowBatchField, int rowCountField) {
    try {
      while (true) {
        int tag = in.readTag();
        if (tag == 0) {
          return 0;
        }
        if (WireFormat.getTagFieldNumber(tag) == arrowBatchField
            && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          int limit = in.pushLimit(in.readRawVarint32());
          while (!in.isAtEnd()) {
            int inner = in.readTag();
            if (WireFormat.getTagFieldNumber(inner) == rowCountField
                && WireFormat.getTagWireType(inner) == WireFormat.WIRETYPE_VARINT) {
              return in.readInt64();
            }
            in.skipField(inner);
          }
          in.popLimit(limit);
          return 0;
        }
        if (!in.skipField(tag)) {
          return 0;
        }
      }
    } catch (IOException e) {
      return 0;
    }
  }
}
