package io.sparkgate.admin;

import java.util.List;
import java.util.Map;

/** The engines the admin API lists and stops (pools whose Spark servers Sparkgate starts on demand). */
public interface EngineControl {
  /** Every engine: pool, key, owner replica, address, state, started, age, sessions, last use. */
  List<Map<String, Object>> list();

  /**
   * Stops {@code key}'s engine of {@code pool} (sessions released first) on behalf of {@code operator};
   * whether this replica owned it (another replica's engine is stopped by its owner).
   */
  boolean stop(String pool, String key, String operator);
}
