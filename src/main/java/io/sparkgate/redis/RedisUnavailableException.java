package io.sparkgate.redis;

/** Redis did not answer (down, unreachable, too slow, refusing): the caller answers UNAVAILABLE. */
public final class RedisUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public RedisUnavailableException(String message) {
    super(message);
  }

  public RedisUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
