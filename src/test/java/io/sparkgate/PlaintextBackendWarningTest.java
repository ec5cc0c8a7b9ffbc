package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.sparkgate.config.ProxyConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** At start, each backend reached in plaintext at an address that may be another machine is named, with the fix. */
final class PlaintextBackendWarningTest {
  @TempDir Path dir;

  @Test
  void plaintextBeyondLoopback_isWarnedAbout_loopbackAndTlsAreNot() throws Exception {
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(
        file,
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0, plaintext: true}",
            "auth: {anonymous: true}",
            "pools:",
            "  analytics:",
            "    backends: ['spark-a.invalid:15002', '127.0.0.1:1']",
            "routes: [{pool: analytics}]",
            ""));
    List<String> warnings = new CopyOnWriteArrayList<>();
    Logger logger = (Logger) LoggerFactory.getLogger(Sparkgate.class);
    AppenderBase<ILoggingEvent> capture =
        new AppenderBase<>() {
          @Override
          protected void append(ILoggingEvent e) {
            if (e.getLevel() == Level.WARN
                && e.getFormattedMessage().contains("plaintext beyond")) {
              warnings.add(e.getFormattedMessage());
            }
          }
        };
    capture.setContext(logger.getLoggerContext());
    capture.start();
    logger.addAppender(capture);
    try (Sparkgate proxy = Sparkgate.start(ProxyConfig.load(file))) {
      assertEquals(1, warnings.size(), warnings.toString());
      assertTrue(
          warnings
              .get(0)
              .startsWith(
                  "backend spark-a.invalid:15002 is reached in plaintext beyond loopback: set tls on"
                      + " its entry in pools.analytics.backends"),
          warnings.get(0));
    } finally {
      logger.detachAppender(capture);
    }
  }
}
