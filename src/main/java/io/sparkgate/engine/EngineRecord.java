package io.sparkgate.engine;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * An engine as every replica sees it in the directory: which replica owns it (starts, renews, stops it),
 * where it listens and the token it checks, so another replica can route to it.
 *
 * @param state {@code starting} or {@code ready}
 * @param pid the engine's process on its owner's host, for an owner that restarts (or one that adopts it
 *     there) to find it again
 */
record EngineRecord(
    String id,
    String key,
    String address,
    String token,
    String owner,
    String host,
    long pid,
    String state,
    long startedMillis) {
  static final String STARTING = "starting";
  static final String READY = "ready";

  private static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  boolean ready() {
    return READY.equals(state);
  }

  EngineRecord withState(String next, long nextPid) {
    return new EngineRecord(id, key, address, token, owner, host, nextPid, next, startedMillis);
  }

  EngineRecord ownedBy(String replica) {
    return new EngineRecord(id, key, address, token, replica, host, pid, state, startedMillis);
  }

  String encode() {
    try {
      return JSON.writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The record {@link #encode()} wrote; null for a value that is not one. */
  static EngineRecord decode(String value) {
    if (value == null) return null;
    try {
      return JSON.readValue(value, EngineRecord.class);
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  @Override
  public String toString() {
    return "engine " + id + " (" + key + ") at " + address + ", " + state + ", owner " + owner;
  }
}
