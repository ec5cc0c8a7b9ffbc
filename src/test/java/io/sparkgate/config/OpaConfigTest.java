package io.sparkgate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class OpaConfigTest {
  @TempDir Path dir;

  private Path write(String opa) throws IOException {
    Files.writeString(dir.resolve("p.yaml"), "rules: []\n");
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(
        file,
        "listen:\n  address: 127.0.0.1\n  port: 0\n  plaintext: true\n"
            + "backend:\n  address: localhost:15002\n"
            + "auth: {anonymous: true}\n"
            + "policy:\n  file: p.yaml\n  opa:\n"
            + opa.indent(4));
    return file;
  }

  private OpaConfig load(String opa) throws IOException {
    return ProxyConfig.load(write(opa)).policy().opa().orElseThrow();
  }

  private String error(String opa) throws IOException {
    Path file = write(opa);
    return assertThrows(ConfigException.class, () -> ProxyConfig.load(file)).getMessage();
  }

  @Test
  void defaults_denyOnError_250ms_cacheOn() throws IOException {
    OpaConfig c = load("url: http://127.0.0.1:8181\npath: sparkgate/allow\n");
    assertEquals(URI.create("http://127.0.0.1:8181/v1/data/sparkgate/allow"), c.decisionUrl());
    assertEquals(Duration.ofMillis(250), c.timeout());
    assertFalse(c.allowOnError());
    assertEquals(10_000, c.cacheEntries());
    assertEquals(Duration.ofSeconds(10), c.cacheTtl());
    assertTrue(c.token().isEmpty());
    assertTrue(c.caFile().isEmpty());
  }

  @Test
  void noOpaSection_noOpa() throws IOException {
    Files.writeString(dir.resolve("p.yaml"), "rules: []\n");
    Path file = dir.resolve("plain.yaml");
    Files.writeString(
        file,
        "listen:\n  address: 127.0.0.1\n  port: 0\n  plaintext: true\nbackend:\n  address: localhost:15002\n"
            + "auth: {anonymous: true}\npolicy:\n  file: p.yaml\n");
    assertTrue(ProxyConfig.load(file).policy().opa().isEmpty());
  }

  @Test
  void everything_set_tokenNeverShown() throws IOException {
    Files.writeString(dir.resolve("ca.pem"), "ca");
    Path token = dir.resolve("opa.token");
    Files.writeString(token, "s3cr3t-token\n");
    Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
    OpaConfig c =
        load(
            "url: https://opa.example:8443/\nca_file: ca.pem\ntoken_file: opa.token\n"
                + "path: /v1/data/acme/spark/allow\ntimeout: 1s\non_error: allow\n"
                + "cache: {max_entries: 0, ttl: 2s}\n");
    assertEquals(URI.create("https://opa.example:8443/v1/data/acme/spark/allow"), c.decisionUrl());
    assertEquals(dir.resolve("ca.pem"), c.caFile().orElseThrow());
    assertEquals("s3cr3t-token", c.token().orElseThrow().reveal());
    assertFalse(c.toString().contains("s3cr3t"), c.toString());
    assertEquals(Duration.ofSeconds(1), c.timeout());
    assertTrue(c.allowOnError());
    assertEquals(0, c.cacheEntries());
  }

  @Test
  void errors_nameTheKey() throws IOException {
    assertTrue(
        error("path: sparkgate/allow\n").contains("policy.opa.url: is required"),
        error("path: sparkgate/allow\n"));
    String scheme = error("url: grpc://127.0.0.1:8181\npath: sparkgate/allow\n");
    assertTrue(scheme.contains("policy.opa.url: must be an http:// or https:// URL"), scheme);
    String withPath = error("url: http://127.0.0.1:8181/v1/data\npath: sparkgate/allow\n");
    assertTrue(withPath.contains("policy.opa.url: must be OPA's address without a path"), withPath);
    String userInfo = error("url: http://alice:hunter2@127.0.0.1:8181\npath: sparkgate/allow\n");
    assertTrue(userInfo.contains("policy.opa.url: must be OPA's address alone"), userInfo);
    assertFalse(userInfo.contains("hunter2"), userInfo);
    String ca = error("url: http://127.0.0.1:8181\nca_file: x.pem\npath: sparkgate/allow\n");
    assertTrue(ca.contains("policy.opa.ca_file: is for an https:// url"), ca);
    assertTrue(
        error("url: http://127.0.0.1:8181\n").contains("policy.opa.path: is required"),
        error("url: http://127.0.0.1:8181\n"));
    String path = error("url: http://127.0.0.1:8181\npath: sparkgate.allow\n");
    assertTrue(path.contains("policy.opa.path: must name a decision document"), path);
    String onError = error("url: http://127.0.0.1:8181\npath: a/b\non_error: ignore\n");
    assertTrue(onError.contains("policy.opa.on_error: must be deny"), onError);
    String timeout = error("url: http://127.0.0.1:8181\npath: a/b\ntimeout: 2m\n");
    assertTrue(timeout.contains("policy.opa.timeout: must be between"), timeout);
    String entries = error("url: http://127.0.0.1:8181\npath: a/b\ncache: {max_entries: -1}\n");
    assertTrue(entries.contains("policy.opa.cache.max_entries"), entries);
    String key = error("url: http://127.0.0.1:8181\npath: a/b\ncache: {size: 3}\n");
    assertTrue(key.contains("policy.opa.cache") && key.contains("size"), key);
    String unknown = error("url: http://127.0.0.1:8181\npath: a/b\nquery: x\n");
    assertTrue(unknown.contains("query"), unknown);
    String token = error("url: http://127.0.0.1:8181\npath: a/b\ntoken_file: missing.token\n");
    assertTrue(token.contains("policy.opa.token_file: file"), token);
  }
}
