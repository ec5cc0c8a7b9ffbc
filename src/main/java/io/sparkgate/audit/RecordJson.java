package io.sparkgate.audit;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Collection;
import java.util.Map;

/**
 * One audit record as its JSON line: {@code seq} and {@code prev} first, then the record's fields in order.
 * Not thread-safe: it reuses one buffer, and belongs to the writer thread.
 */
final class RecordJson {
  private static final ObjectMapper JSON =
      new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

  private final ByteArrayOutputStream line = new ByteArrayOutputStream(1024);

  /** The line (without its newline) of {@code record} as the next record of {@code chain}. */
  byte[] line(HashChain chain, Map<String, Object> record) throws IOException {
    // Serialized straight into a reused buffer: building a JSON tree first cost twice as much.
    line.reset();
    try (JsonGenerator json = JSON.getFactory().createGenerator(line)) {
      json.writeStartObject();
      json.writeNumberField("seq", chain.nextSeq());
      json.writeStringField("prev", chain.prev());
      for (Map.Entry<String, Object> e : record.entrySet()) {
        json.writeFieldName(e.getKey());
        writeValue(json, e.getValue());
      }
      json.writeEndObject();
    }
    return line.toByteArray();
  }

  /**
   * Records hold strings, numbers, booleans, and maps and lists of those (a plan summary, a principal's
   * groups); they are written here as ObjectMapper writes them, and anything else goes to ObjectMapper. Each
   * ObjectMapper.writeValue call builds a serializer provider: one per field was a kilobyte of garbage per
   * record, and one per map or list still a sixth of the record's JSON time (profiled in place).
   */
  static void writeValue(JsonGenerator json, Object value) throws IOException {
    if (value instanceof String s) {
      json.writeString(s);
    } else if (value instanceof Long l) {
      json.writeNumber(l);
    } else if (value instanceof Integer i) {
      json.writeNumber(i);
    } else if (value instanceof Boolean b) {
      json.writeBoolean(b);
    } else if (value == null) {
      json.writeNull();
    } else if (value instanceof Map<?, ?> map) {
      json.writeStartObject();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        json.writeFieldName(String.valueOf(e.getKey()));
        writeValue(json, e.getValue());
      }
      json.writeEndObject();
    } else if (value instanceof Collection<?> items) {
      json.writeStartArray();
      for (Object item : items) {
        writeValue(json, item);
      }
      json.writeEndArray();
    } else {
      JSON.writeValue(json, value);
    }
  }
}
