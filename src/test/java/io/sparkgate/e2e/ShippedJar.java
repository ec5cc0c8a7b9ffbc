package io.sparkgate.e2e;

import java.io.IOException;
import java.nio.file.Path;

/** The proxy as operators run it: {@code java -jar target/sparkgate.jar serve --config <file>}. */
final class ShippedJar {
  private ShippedJar() {}

  /** Starts it in {@code dir} (where relative paths in the file resolve), its output appended to {@code log}. */
  static Process serve(Path config, Path dir, Path log) throws IOException {
    return new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-jar",
            Path.of("target", "sparkgate.jar").toAbsolutePath().toString(),
            "serve",
            "--config",
            config.toString())
        .directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .start();
  }
}
