package io.sparkgate.revoke;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One principal or token an operator cut off.
 *
 * @param name the principal exactly as authentication names it, or the token's {@code jti}
 * @param until when it lapses by itself; empty: until restored
 * @param operator who revoked it, as the admin listener identified them
 */
public record Revocation(
    Kind kind, String name, String reason, Optional<Instant> until, String operator, Instant at) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What is cut off: every call of a principal, or the calls carrying one JWT. */
  public enum Kind {
    PRINCIPAL,
    TOKEN;

    public String key() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Kind of(String key) {
      return valueOf(key.toUpperCase(Locale.ROOT));
    }
  }

  public Revocation {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(until, "until");
    Objects.requireNonNull(operator, "operator");
    Objects.requireNonNull(at, "at");
  }

  /** Whether it is in force at {@code now}. */
  public boolean activeAt(Instant now) {
    return until.isEmpty() || now.isBefore(until.get());
  }

  /** What is cut off, one string ({@code principal:alice}): the key a store keeps it under. */
  public String id() {
    return id(kind, name);
  }

  static String id(Kind kind, String name) {
    return kind.key() + ":" + name;
  }

  /** As the admin API shows it and the stores keep it. */
  public Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", kind.key());
    m.put("name", name);
    m.put("reason", reason);
    m.put("until", until.map(Instant::toString).orElse(null));
    m.put("operator", operator);
    m.put("at", at.toString());
    return m;
  }

  String toJson() {
    try {
      return JSON.writeValueAsString(toMap());
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** @throws IllegalArgumentException for text that is not a revocation as {@link #toJson} writes it */
  static Revocation fromJson(String text) {
    try {
      return from(JSON.readTree(text));
    } catch (JsonProcessingException | RuntimeException e) {
      throw new IllegalArgumentException("not a revocation: " + e.getMessage(), e);
    }
  }

  static Revocation from(JsonNode n) {
    JsonNode until = n.path("until");
    try {
      return new Revocation(
          Kind.of(n.path("kind").asText()),
          text(n, "name"),
          n.path("reason").asText(""),
          until.isTextual() ? Optional.of(Instant.parse(until.asText())) : Optional.empty(),
          n.path("operator").asText("unknown"),
          Instant.parse(text(n, "at")));
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException("a time is not RFC 3339: " + e.getParsedString(), e);
    }
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.path(field);
    if (!v.isTextual() || v.asText().isEmpty()) {
      throw new IllegalArgumentException("no " + field);
    }
    return v.asText();
  }
}
