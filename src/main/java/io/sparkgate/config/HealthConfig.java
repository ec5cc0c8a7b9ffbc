package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.time.Duration;

/**
 * Backend health ({@code health:}).
 *
 * @param interval how often every backend is probed
 * @param timeout how long a probe may take before it counts as a failure
 * @param sessionLostAfter how long the sessions of a backend that is down are told to retry (UNAVAILABLE)
 *     before they are told that the session is lost and to start a new one
 */
public record HealthConfig(Duration interval, Duration timeout, Duration sessionLostAfter) {

  public static HealthConfig defaults() {
    return new HealthConfig(Duration.ofSeconds(5), Duration.ofSeconds(2), Duration.ofMinutes(2));
  }

  static HealthConfig read(YamlNode node) {
    node.allowOnly("interval", "timeout", "session_lost_after");
    HealthConfig d = defaults();
    return new HealthConfig(
        node.duration("interval", d.interval(), Duration.ofMillis(100), Duration.ofMinutes(10)),
        node.duration("timeout", d.timeout(), Duration.ofMillis(50), Duration.ofMinutes(1)),
        node.duration(
            "session_lost_after", d.sessionLostAfter(), Duration.ZERO, Duration.ofHours(24)));
  }
}
