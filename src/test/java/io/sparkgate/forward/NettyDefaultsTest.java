package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

final class NettyDefaultsTest {
  @Test
  void apply_setsOnlyWhatTheOperatorLeftUnset() {
    Map.Entry<String, String> first = NettyDefaults.DEFAULTS.entrySet().iterator().next();
    String before = System.getProperty(first.getKey());
    try {
      System.setProperty(first.getKey(), "operator-choice");
      NettyDefaults.apply();
      assertEquals("operator-choice", System.getProperty(first.getKey()));
      System.clearProperty(first.getKey());
      NettyDefaults.apply();
      assertEquals(first.getValue(), System.getProperty(first.getKey()));
    } finally {
      if (before == null) {
        System.clearProperty(first.getKey());
      } else {
        System.setProperty(first.getKey(), before);
      }
    }
  }
}
