package io.sparkgate.admin;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The audit record of one operator action (and its line in the proxy's log): every action writes one. */
final class OperatorRecords {
  private static final Logger log = LoggerFactory.getLogger(OperatorRecords.class);

  private final Consumer<Map<String, Object>> sink; // null: audit off
  private final Clock clock;

  OperatorRecords(Consumer<Map<String, Object>> sink, Clock clock) {
    this.sink = sink;
    this.clock = clock;
  }

  /**
   * Writes the record: the common fields, then {@code details} in their order (null values are left out).
   *
   * @param target what was acted on, {@code kind:id}
   */
  void write(
      String operator, String action, String target, String outcome, Map<String, Object> details) {
    log.info("operator {} {} {}: {}", operator, action, target, outcome);
    if (sink == null) return;
    Map<String, Object> record = new LinkedHashMap<>();
    record.put("time", clock.instant().toString());
    record.put("request_id", UUID.randomUUID().toString());
    record.put("rpc", "admin");
    record.put("operator", operator);
    record.put("action", action);
    record.put("target", target);
    details.forEach(
        (k, v) -> {
          if (v != null) record.put(k, v);
        });
    record.put("outcome", outcome);
    sink.accept(record);
  }
}
