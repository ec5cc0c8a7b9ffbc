package io.sparkgate.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One request to the admin listener, as a handler sees it: already authenticated.
 *
 * @param method upper case, as sent
 * @param path the URL path, without the query
 * @param query decoded query parameters
 * @param body the request body (empty for GET)
 * @param operator who asked: the client certificate's subject, {@code token} for the bearer token, {@code
 *     loopback} on a listener without credentials; audit records of operator actions carry it
 */
public record AdminRequest(
    String method, String path, Map<String, List<String>> query, byte[] body, String operator) {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The body as a JSON object; empty when it is not JSON, or JSON but not an object. */
  public Optional<JsonNode> jsonObject() {
    try {
      JsonNode body = JSON.readTree(body());
      return body != null && body.isObject() ? Optional.of(body) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** The first value of query parameter {@code name}. */
  public Optional<String> param(String name) {
    List<String> values = query.get(name);
    return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
  }
}
