package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

final class RecordJsonTest {
  /** A value the record writer does not encode itself: ObjectMapper's to write. */
  record Rewrite(String rule, int changes) {}

  /** The record writer's own map and list encoding must give exactly the JSON ObjectMapper gives. */
  @Test
  void nestedValuesAreWrittenAsObjectMapperWritesThem() throws IOException {
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("kinds", List.of("rpc:ExecutePlan", "sql:query"));
    summary.put("tables", new TreeSet<>(Set.of("b", "a \"quoted\" \u00e9\n")));
    summary.put("nested", new TreeMap<>(Map.of("n", 3, "big", 1L << 40, "flag", true)));
    summary.put("none", null);
    summary.put("empty", List.of());
    summary.put("ratio", 0.25);
    summary.put("rewrite", new Rewrite("iceberg", 2));
    ObjectMapper mapper = new ObjectMapper();
    StringWriter ours = new StringWriter();
    try (JsonGenerator json = mapper.getFactory().createGenerator(ours)) {
      RecordJson.writeValue(json, summary);
    }
    assertEquals(mapper.writeValueAsString(summary), ours.toString());
    assertTrue(
        ours.toString().startsWith("{\"kinds\":[\"rpc:ExecutePlan\",\"sql:query\"],"),
        ours.toString());
  }

  /** seq and prev lead every line, then the record's fields in the order they were put. */
  @Test
  void lineStartsWithTheChainThenTheFieldsInOrder() throws IOException {
    HashChain chain = HashChain.start();
    RecordJson json = new RecordJson();
    Map<String, Object> record = AuditLog.newRecord();
    record.put("rpc", "ExecutePlan");
    record.put("principal", "alice");
    byte[] first = json.line(chain, record);
    assertEquals(
        "{\"seq\":1,\"prev\":\""
            + HashChain.GENESIS
            + "\",\"rpc\":\"ExecutePlan\",\"principal\":\"alice\"}",
        new String(first, StandardCharsets.UTF_8));
    chain.append(first);
    String second = new String(json.line(chain, record), StandardCharsets.UTF_8);
    assertTrue(
        second.startsWith("{\"seq\":2,\"prev\":\"" + HashChain.sha256Hex(first) + "\","), second);
  }
}
