package io.sparkgate.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.sparkgate.config.ConfigException;
import io.sparkgate.config.ProxyConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Any text as sparkgate.yaml (the corpus: the shipped configurations and ones with every section, which the
 * fuzzer mutates). It loads, or is rejected with a ConfigException naming the file; never another exception.
 */
final class ProxyConfigFuzzTest {
  /** A directory with the files a configuration may name, so that loading gets past its file checks. */
  private static final Path DIR = directory();

  private static final Path FILE = DIR.resolve("sparkgate.yaml");

  @FuzzTest
  void load_anyText_loadsOrNamesTheFile(byte[] input) throws IOException {
    Files.write(FILE, input);
    try {
      ProxyConfig.load(FILE);
    } catch (ConfigException e) {
      assertTrue(
          e.getMessage() != null && e.getMessage().contains(FILE.toString()),
          () -> "does not name the file: " + e);
    }
  }

  private static Path directory() {
    try {
      Path dir = Files.createTempDirectory("sparkgate-config-fuzz");
      // Deleted at exit in the reverse order of registration: the files, then the directory.
      dir.toFile().deleteOnExit();
      dir.resolve("sparkgate.yaml").toFile().deleteOnExit();
      for (String name :
          new String[] {
            "server.pem",
            "server.key",
            "client-ca.pem",
            "token",
            "jwks.json",
            "key.pem",
            "hmac.key",
            "policy.yaml"
          }) {
        Files.writeString(dir.resolve(name), "x\n");
        dir.resolve(name).toFile().deleteOnExit();
      }
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
