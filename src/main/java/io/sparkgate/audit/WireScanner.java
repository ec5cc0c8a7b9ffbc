package io.sparkgate.audit;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.WireFormat;
import io.sparkgate.forward.Payload;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Reads a few top-level string fields (session id, operation id, client type ...) of a Spark Connect
 * message, and the row count of a result batch, without parsing it: other fields, a plan or a batch of any
 * size included, are skipped in place. One pass per message, with nothing built but the strings it reports.
 */
final class WireScanner {
  /** Field numbers wanted, and the name each is reported as (a handful: a linear search beats hashing). */
  private final int[] numbers;

  private final String[] names;

  /** The top-level field holding an arrow batch whose rows are counted, and its row count; 0: none. */
  private final int batchField;

  private final int rowCountField;

  /** Reads a message up to its row count only (one reader for every call, not one per call). */
  private final Payload.Reader<Long> rowsOnly = this::rowsOf;

  /**
   * Scans for the fields of {@code type} with these names that exist in it, e.g. "operation_id", reporting
   * each as {@code prefix + name} (made once here, not per call), and with {@code countRows} also the row
   * count of the message's {@code arrow_batch}.
   */
  WireScanner(Descriptor type, Set<String> names, String prefix, boolean countRows) {
    List<FieldDescriptor> fields = new ArrayList<>();
    for (FieldDescriptor field : type.getFields()) {
      if (names.contains(field.getName())
          && field.getType() == FieldDescriptor.Type.STRING
          && !field.isRepeated()) {
        fields.add(field);
      }
    }
    this.numbers = fields.stream().mapToInt(FieldDescriptor::getNumber).toArray();
    this.names = fields.stream().map(f -> prefix + f.getName()).toArray(String[]::new);
    FieldDescriptor batch = countRows ? type.findFieldByName("arrow_batch") : null;
    if (countRows && batch == null) {
      throw new IllegalArgumentException(
          type.getFullName() + " has no arrow_batch to count rows in");
    }
    this.batchField = batch == null ? 0 : batch.getNumber();
    this.rowCountField =
        batch == null ? 0 : batch.getMessageType().findFieldByName("row_count").getNumber();
  }

  /** Whether {@link #scan} counts rows: worth calling on every message, not just the first. */
  boolean countsRows() {
    return batchField != 0;
  }

  /**
   * The later messages of a call whose rows count, as a payload reader ({@link Payload#readHead}): reads up
   * to the batch's row count, which precedes its data, and returns it; null when what it was shown (a prefix
   * of the message, a malformed message, or one without a batch) ended before a count was known.
   */
  Payload.Reader<Long> rowsOnly() {
    return rowsOnly;
  }

  private Long rowsOf(CodedInputStream in) {
    try {
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        if (WireFormat.getTagFieldNumber(tag) == batchField
            && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          // No limit pushed: a view of the first bytes only refuses a limit past its end.
          int length = in.readRawVarint32();
          int end = in.getTotalBytesRead() + length;
          long rows = rowCount(in, end);
          if (rows >= 0) {
            return rows;
          }
          // No count before the batch's end: proto3 leaves a count of 0 out. Else the view ended
          // first.
          return in.getTotalBytesRead() == end ? Long.valueOf(0) : null;
        }
        if (!in.skipField(tag)) {
          return null;
        }
      }
      return null; // no batch in what was shown: if that was all of it, the caller counts 0
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * Hands each wanted field present in the message to {@code into} and returns the rows of its arrow batch
   * (0 when it has none, or rows are not counted). A malformed message yields what was read before the
   * fault: the inspector, not the audit, reports malformed requests.
   */
  long scan(CodedInputStream in, BiConsumer<String, Object> into) {
    long rows = 0;
    try {
      while (true) {
        int tag = in.readTag();
        if (tag == 0) {
          return rows;
        }
        int number = WireFormat.getTagFieldNumber(tag);
        boolean delimited = WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED;
        String name = delimited ? nameOf(number) : null;
        if (name != null) {
          into.accept(name, in.readString());
        } else if (number == batchField && delimited) {
          int length = in.readRawVarint32();
          int limit = in.pushLimit(length);
          rows = Math.max(rowCount(in, in.getTotalBytesRead() + length), 0);
          in.skipRawBytes(in.getBytesUntilLimit());
          in.popLimit(limit);
        } else if (!in.skipField(tag)) {
          return rows;
        }
      }
    } catch (IOException e) {
      return rows;
    }
  }

  private String nameOf(int number) {
    for (int i = 0; i < numbers.length; i++) {
      if (numbers[i] == number) {
        return names[i];
      }
    }
    return null;
  }

  /**
   * The row count inside an arrow batch that ends at {@code end} (in bytes read), read up to the count (it
   * precedes the data); -1 when not seen before the batch's end or the end of what can be read.
   */
  private long rowCount(CodedInputStream in, int end) throws IOException {
    while (in.getTotalBytesRead() < end) {
      int tag = in.readTag();
      if (tag == 0) {
        break;
      }
      if (WireFormat.getTagFieldNumber(tag) == rowCountField
          && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_VARINT) {
        return in.readInt64();
      }
      if (!in.skipField(tag)) {
        break;
      }
    }
    return -1;
  }
}
