package io.sparkgate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

class JulBridgeTest {

  @Test
  void grpcsJavaUtilLoggingReachesLogbackAndNothingElse() {
    JulBridge.install();
    JulBridge.install(); // twice, as a second command in one JVM would: still one handler

    java.util.logging.Handler[] handlers = java.util.logging.Logger.getLogger("").getHandlers();
    assertEquals(1, handlers.length, "JUL's root handlers: " + Arrays.toString(handlers));
    assertTrue(handlers[0] instanceof SLF4JBridgeHandler, "JUL's own console handler is gone");

    String name = "io.grpc.netty.shaded.io.grpc.netty.JulBridgeProbe";
    Logger logback = (Logger) LoggerFactory.getLogger(name);
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    logback.addAppender(seen);
    try {
      java.util.logging.Logger.getLogger(name).warning("Stream Error");
      assertEquals(1, seen.list.size(), "the JUL warning reached Logback");
      assertEquals(Level.WARN, seen.list.get(0).getLevel());
      assertEquals("Stream Error", seen.list.get(0).getFormattedMessage());
    } finally {
      logback.detachAppender(seen);
    }
  }
}
