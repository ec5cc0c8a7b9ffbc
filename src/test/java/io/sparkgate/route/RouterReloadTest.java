package io.sparkgate.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.sparkgate.config.ProxyConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which pool changes a running proxy takes from a reloaded file, and which need a restart. */
final class RouterReloadTest {
  @TempDir Path dir;

  private ProxyConfig load(String backends) throws IOException {
    Files.writeString(dir.resolve("ca.pem"), "ca");
    Files.writeString(dir.resolve("other-ca.pem"), "ca");
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(
        file,
        "listen: {address: 127.0.0.1, port: 0, plaintext: true}\n"
            + "auth: {anonymous: true}\n"
            + "pools:\n  analytics:\n    backends: "
            + backends
            + "\n");
    return ProxyConfig.load(file);
  }

  @Test
  void newPlaintextBackend_isTakenAtOnce() throws IOException {
    assertNull(
        Router.unsafeChange(load("['spark-a:15002']"), load("['spark-a:15002', 'spark-b:15002']")));
  }

  @Test
  void tlsChanges_waitForARestart_neverReachingABackendOtherwiseThanConfigured()
      throws IOException {
    String plaintext = "['spark-a:15002']";
    String tls = "[{address: 'spark-a:15002', tls: {ca_file: ca.pem}}]";
    assertEquals(
        "backend spark-a:15002's tls changed", Router.unsafeChange(load(plaintext), load(tls)));
    assertEquals(
        "backend spark-a:15002's tls changed", Router.unsafeChange(load(tls), load(plaintext)));
    assertEquals(
        "backend spark-a:15002's tls changed",
        Router.unsafeChange(
            load(tls), load("[{address: 'spark-a:15002', tls: {ca_file: other-ca.pem}}]")));
    assertEquals(
        "the new backend spark-b:15002 has tls",
        Router.unsafeChange(
            load(plaintext),
            load("['spark-a:15002', {address: 'spark-b:15002', tls: {ca_file: ca.pem}}]")));
    assertNull(Router.unsafeChange(load(tls), load(tls)));
  }
}
