package io.sparkgate.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a handler answers: a status, a content type, the body, and headers of its own (a page's
 * Content-Security-Policy); the listener adds the headers every answer carries.
 */
public record AdminResponse(
    int status, String contentType, byte[] body, Map<String, String> headers) {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  public AdminResponse {
    headers = Map.copyOf(headers);
  }

  public AdminResponse(int status, String contentType, byte[] body) {
    this(status, contentType, body, Map.of());
  }

  /** This answer with one more header. */
  public AdminResponse withHeader(String name, String value) {
    Map<String, String> more = new LinkedHashMap<>(headers);
    more.put(name, value);
    return new AdminResponse(status, contentType, body, more);
  }

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
