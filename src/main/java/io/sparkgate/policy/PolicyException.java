package io.sparkgate.policy;

/** A policy file that cannot be used; the message names the file, the line, the rule and the problem. */
public final class PolicyException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  PolicyException(String message, Throwable cause) {
    super(message, cause);
  }
}
