package io.sparkgate.cli;

/** Unusable input: each command says why in one line and exits 2, never with a stack trace. */
final class Refused extends RuntimeException {
  Refused(String message) {
    super(message, null, false, false);
  }
}
