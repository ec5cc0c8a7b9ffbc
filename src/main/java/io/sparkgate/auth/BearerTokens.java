package io.sparkgate.auth;

import io.grpc.Metadata;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Finds the client's bearer token. PySpark and the 4.2+ JVM client send {@code authorization}; the 4.0/4.1
 * JVM client over TLS sends {@code authentication} (surface notes, section 6). Anything ambiguous is refused
 * rather than guessed: a request carrying two different credentials may be trying to get one checked and
 * the other used.
 */
final class BearerTokens {
  /** Far above any real IdP token, far below what would make hashing or parsing a cost worth attacking. */
  static final int MAX_TOKEN_CHARS = 16 * 1024;

  static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> AUTHENTICATION = Metadata.Key.of("authentication", Metadata.ASCII_STRING_MARSHALLER);

  private BearerTokens() {}

  /** The token, empty when the client sent none. */
  static Optional<String> extract(Metadata headers) throws AuthFailure {
    List<String> values = new ArrayList<>();
    for (Metadata.Key<String> key : List.of(AUTHORIZATION, AUTHENTICATION)) {
      Iterable<String> all = headers.getAll(key);
      int count = 0;
      if (all != null) {
        for (String v : all) {
          values.add(v);
          count++;
        }
      }
      if (count > 1) {
        throw new AuthFailure(AuthFailure.Reason.TWO_CREDENTIALS,
            "more than one " + key.name() + " header: send exactly one token");
      }
    }
    String token = null;
    for (String value : values) {
      String t = parse(value);
      if (token != null && !token.equals(t)) {
        throw new AuthFailure(AuthFailure.Reason.TWO_CREDENTIALS,
            "authorization and authentication headers carry different tokens: send exactly one token");
      }
      token = t;
    }
    return Optional.ofNullable(token);
  }

  private static String parse(String value) throws AuthFailure {
    String v = value.strip();
    int space = v.indexOf(' ');
    String scheme = space < 0 ? v : v.substring(0, space);
    if (!scheme.toLowerCase(Locale.ROOT).equals("bearer")) {
      throw new AuthFailure(AuthFailure.Reason.BAD_HEADER,
          "unsupported authorization scheme: send 'Bearer <token>' (token=... in the sc:// URL)");
    }
    String token = space < 0 ? "" : v.substring(space + 1).strip();
    if (token.isEmpty()) {
      throw new AuthFailure(AuthFailure.Reason.EMPTY_TOKEN, "empty Bearer token: pass token=... in the sc:// URL");
    }
    if (token.length() > MAX_TOKEN_CHARS) {
      throw new AuthFailure(AuthFailure.Reason.TOKEN_TOO_LONG,
          "token too long (" + token.length() + " characters, at most " + MAX_TOKEN_CHARS + ")");
    }
    return token;
  }
}
