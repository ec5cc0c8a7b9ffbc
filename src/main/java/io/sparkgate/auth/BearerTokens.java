package io.sparkgate.auth;

import io.grpc.Metadata;
import java.util.Iterator;
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

  private static final String BEARER = "bearer";

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> AUTHENTICATION =
      Metadata.Key.of("authentication", Metadata.ASCII_STRING_MARSHALLER);

  private BearerTokens() {}

  /** The token, empty when the client sent none. */
  static Optional<String> extract(Metadata headers) throws AuthFailure {
    // Both headers are checked for duplicates before either is parsed, so two credentials are
    // always named.
    String authorization = single(headers, AUTHORIZATION);
    String authentication = single(headers, AUTHENTICATION);
    String token = authorization == null ? null : parse(authorization);
    if (authentication != null) {
      String t = parse(authentication);
      if (token != null && !token.equals(t)) {
        throw new AuthFailure(
            AuthFailure.Reason.TWO_CREDENTIALS,
            "authorization and authentication headers carry different tokens: send exactly one token");
      }
      token = t;
    }
    return Optional.ofNullable(token);
  }

  /** The header's value, null when absent; refused when it occurs more than once. */
  private static String single(Metadata headers, Metadata.Key<String> key) throws AuthFailure {
    Iterable<String> all = headers.getAll(key);
    if (all == null) {
      return null;
    }
    Iterator<String> values = all.iterator();
    String value = values.next();
    if (values.hasNext()) {
      throw new AuthFailure(
          AuthFailure.Reason.TWO_CREDENTIALS,
          "more than one " + key.name() + " header: send exactly one token");
    }
    return value;
  }

  private static String parse(String value) throws AuthFailure {
    String v = value.strip();
    int space = v.indexOf(' ');
    int schemeEnd = space < 0 ? v.length() : space;
    if (schemeEnd != BEARER.length() || !v.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
      throw new AuthFailure(
          AuthFailure.Reason.BAD_HEADER,
          "unsupported authorization scheme: send 'Bearer <token>' (token=... in the sc:// URL)");
    }
    String token = space < 0 ? "" : v.substring(space + 1).strip();
    if (token.isEmpty()) {
      throw new AuthFailure(
          AuthFailure.Reason.EMPTY_TOKEN, "empty Bearer token: pass token=... in the sc:// URL");
    }
    if (token.length() > MAX_TOKEN_CHARS) {
      throw new AuthFailure(
          AuthFailure.Reason.TOKEN_TOO_LONG,
          "token too long (" + token.length() + " characters, at most " + MAX_TOKEN_CHARS + ")");
    }
    return token;
  }
}
