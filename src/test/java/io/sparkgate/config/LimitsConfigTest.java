package io.sparkgate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class LimitsConfigTest {
  @TempDir Path dir;

  private static final String BASE =
      "listen: {plaintext: true, address: 127.0.0.1}\n"
          + "backend: {address: 'localhost:15002'}\n"
          + "auth:\n  anonymous: true\n";

  private Path write(String yaml) throws IOException {
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(file, BASE + yaml);
    return file;
  }

  private String error(String yaml) throws IOException {
    Path file = write(yaml);
    return assertThrows(ConfigException.class, () -> ProxyConfig.load(file)).getMessage();
  }

  @Test
  void noSection_secureDefaults() throws IOException {
    LimitsConfig l = ProxyConfig.load(write("")).limits();
    assertEquals(LimitsConfig.defaults(), l);
    assertEquals(10_000, l.maxConnections());
    assertEquals(256, l.maxConnectionsPerAddress());
    assertEquals(4096, l.maxCalls());
    assertEquals(512L * 1024 * 1024, l.maxBufferedBytes());
    assertEquals(16 * 1024, l.maxHeaderBytes());
    assertEquals(200, l.maxStreamResets());
    assertEquals(Duration.ofSeconds(10), l.streamResetWindow());
  }

  @Test
  void everyKey_read() throws IOException {
    LimitsConfig l =
        ProxyConfig.load(
                write(
                    "limits:\n"
                        + "  max_connections: 100\n"
                        + "  max_connections_per_address: 10\n"
                        + "  max_calls: 50\n"
                        + "  max_buffered_bytes: 64MiB\n"
                        + "  max_header_bytes: 32KiB\n"
                        + "  max_stream_resets: 20\n"
                        + "  stream_reset_window: 30s\n"))
            .limits();
    assertEquals(
        new LimitsConfig(100, 10, 50, 64L * 1024 * 1024, 32 * 1024, 20, Duration.ofSeconds(30)), l);
  }

  @Test
  void perAddressAboveTotal_refusedNamingBoth() throws IOException {
    String e = error("limits:\n  max_connections: 10\n  max_connections_per_address: 20\n");
    assertTrue(e.contains("max_connections_per_address"), e);
    assertTrue(e.contains("more than max_connections (10)"), e);
  }

  @Test
  void smallTotal_perAddressDefaultFollows() throws IOException {
    assertEquals(
        10,
        ProxyConfig.load(write("limits:\n  max_connections: 10\n"))
            .limits()
            .maxConnectionsPerAddress());
  }

  @Test
  void outOfRange_andUnknownKeys_refused() throws IOException {
    assertTrue(error("limits:\n  max_calls: 0\n").contains("max_calls"));
    assertTrue(error("limits:\n  max_header_bytes: 100\n").contains("max_header_bytes"));
    assertTrue(error("limits:\n  max_buffered_bytes: 1KiB\n").contains("max_buffered_bytes"));
    assertTrue(
        error("limits:\n  stream_reset_window: 1500ms\n").contains("whole seconds"),
        "a window gRPC cannot take");
    assertTrue(error("limits:\n  max_conections: 5\n").contains("max_conections"));
  }
}
