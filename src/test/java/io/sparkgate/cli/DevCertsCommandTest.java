package io.sparkgate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

final class DevCertsCommandTest {
  @TempDir Path dir;

  @Test
  void dev_certs_writes_files_and_prints_jvm_flags() {
    CommandLine cli = new CommandLine(new DevCertsCommand());
    StringWriter out = new StringWriter();
    cli.setOut(new PrintWriter(out));
    int code =
        cli.execute(
            "--out",
            dir.toString(),
            "--key-type",
            "ec",
            "--password",
            "pw",
            "--client-name",
            "alice");
    assertEquals(0, code, out::toString);
    for (String f :
        new String[] {
          "ca.pem",
          "ca.key",
          "server.pem",
          "server.key",
          "client.pem",
          "client.key",
          "truststore.p12",
          "client.p12"
        }) {
      assertTrue(Files.isRegularFile(dir.resolve(f)), f);
    }
    assertTrue(
        out.toString()
            .contains(
                "-Djavax.net.ssl.trustStore=" + dir.resolve("truststore.p12").toAbsolutePath()),
        out::toString);
    assertTrue(out.toString().contains("-Djavax.net.ssl.trustStorePassword=pw"), out::toString);
    assertTrue(out.toString().contains("CN=alice"), out::toString);
  }

  @Test
  void dev_certs_rejects_unknown_key_type() {
    CommandLine cli = new CommandLine(new DevCertsCommand());
    cli.setErr(new PrintWriter(new StringWriter()));
    assertEquals(2, cli.execute("--out", dir.toString(), "--key-type", "dsa"));
  }
}
