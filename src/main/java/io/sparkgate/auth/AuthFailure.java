package io.sparkgate.auth;

/**
 * Why a call was not authenticated: a reason to count, a short message the user can act on, and a detail for
 * the log. None of them ever holds the token.
 */
final class AuthFailure extends Exception {
  private static final long serialVersionUID = 1L;

  enum Reason {
    NO_CREDENTIALS,
    BAD_HEADER,
    TWO_CREDENTIALS,
    EMPTY_TOKEN,
    TOKEN_TOO_LONG,
    MALFORMED_TOKEN,
    ALG_NONE,
    ALG_NOT_ALLOWED,
    UNKNOWN_KEY,
    NO_KEYS,
    BAD_SIGNATURE,
    EXPIRED,
    NOT_YET_VALID,
    WRONG_ISSUER,
    WRONG_AUDIENCE,
    LIFETIME_TOO_LONG,
    MISSING_CLAIM,
    BAD_CLAIM,
    UNKNOWN_TOKEN,
    BAD_CLIENT_CERT
  }

  private final Reason reason;
  private final String detail;

  AuthFailure(Reason reason, String clientMessage) {
    this(reason, clientMessage, clientMessage);
  }

  AuthFailure(Reason reason, String clientMessage, String detail) {
    super(clientMessage, null, false, false);
    this.reason = reason;
    this.detail = detail;
  }

  Reason reason() {
    return reason;
  }

  /** The short message for the client, the status description of UNAUTHENTICATED. */
  String clientMessage() {
    return getMessage();
  }

  /** More than the client is told, for the log (never a token). */
  String detail() {
    return detail;
  }
}
