package io.sparkgate.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.nio.charset.StandardCharsets;

/** What a handler answers: a status, a content type and the body. */
public record AdminResponse(int status, String contentType, byte[] body) {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  public static AdminResponse text(int status, String text) {
    return new AdminResponse(
        status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
  }

  /** {@code value} (maps, lists, records, strings, numbers) as JSON. */
  public static AdminResponse json(int status, Object value) {
    try {
      return new AdminResponse(status, "application/json", JSON.writeValueAsBytes(value));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not serializable as JSON: " + value.getClass(), e);
    }
  }

  /** An error as JSON: {@code {"error": message}}. */
  public static AdminResponse error(int status, String message) {
    return json(status, java.util.Map.of("error", message));
  }
}
