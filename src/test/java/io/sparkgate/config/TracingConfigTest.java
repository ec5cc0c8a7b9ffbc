package io.sparkgate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class TracingConfigTest {
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

  private TracingConfig load(String yaml) throws IOException {
    return ProxyConfig.load(write(yaml)).tracing().orElseThrow();
  }

  private String error(String yaml) throws IOException {
    Path file = write(yaml);
    return assertThrows(ConfigException.class, () -> ProxyConfig.load(file)).getMessage();
  }

  @Test
  void noSection_off() throws IOException {
    assertEquals(Optional.empty(), ProxyConfig.load(write("")).tracing());
  }

  @Test
  void endpointOnly_defaults() throws IOException {
    TracingConfig t = load("tracing: {endpoint: 'http://127.0.0.1:4317'}\n");
    assertEquals(URI.create("http://127.0.0.1:4317"), t.endpoint());
    assertEquals(TracingConfig.Protocol.GRPC, t.protocol());
    assertEquals(1.0, t.sampler());
    assertEquals("sparkgate", t.serviceName());
    assertTrue(t.headers().isEmpty());
  }

  @Test
  void everyKey_read_httpGetsTheTracesPath_headersNeverShown() throws IOException {
    Files.writeString(
        dir.resolve("otlp-headers"), "# the vendor's key\nx-api-key: s3cret\n\nx-team:  data \n");
    TracingConfig t =
        load(
            "tracing:\n"
                + "  endpoint: https://collector.example:4318\n"
                + "  protocol: http/protobuf\n"
                + "  sampler: 0.01\n"
                + "  headers_file: otlp-headers\n"
                + "  service_name: sparkgate-eu\n");
    assertEquals(URI.create("https://collector.example:4318/v1/traces"), t.endpoint());
    assertEquals(TracingConfig.Protocol.HTTP_PROTOBUF, t.protocol());
    assertEquals(0.01, t.sampler());
    assertEquals("sparkgate-eu", t.serviceName());
    assertEquals("s3cret", t.headers().get("x-api-key").reveal());
    assertEquals("data", t.headers().get("x-team").reveal());
    assertFalse(t.toString().contains("s3cret"), t.toString());
    assertEquals(
        URI.create("http://c:4318/custom/traces"),
        load("tracing: {endpoint: 'http://c:4318/custom/traces', protocol: http/protobuf}\n")
            .endpoint());
  }

  @Test
  void errors_nameTheKey() throws IOException {
    assertTrue(error("tracing: {protocol: grpc}\n").contains("endpoint"));
    String e = error("tracing: {endpoint: '127.0.0.1:4317'}\n");
    assertTrue(e.contains("endpoint") && e.contains("http://"), e);
    e = error("tracing: {endpoint: 'http://collector'}\n");
    assertTrue(e.contains("must name a host and a port"), e);
    e = error("tracing: {endpoint: 'http://user:pw@collector:4317'}\n");
    assertTrue(e.contains("headers_file") && !e.contains("pw@"), e);
    e = error("tracing: {endpoint: 'http://collector:4317/v1/traces'}\n");
    assertTrue(e.contains("for grpc is a host and port only"), e);
    e = error("tracing: {endpoint: 'http://c:4317', protocol: http}\n");
    assertTrue(e.contains("protocol") && e.contains("grpc or http/protobuf"), e);
    e = error("tracing: {endpoint: 'http://c:4317', sampler: 1.5}\n");
    assertTrue(e.contains("sampler") && e.contains("from 0 to 1"), e);
    e = error("tracing: {endpoint: 'http://c:4317', sampler: 10%}\n");
    assertTrue(e.contains("sampler"), e);
    e = error("tracing: {endpoint: 'http://c:4317', sample: 1}\n");
    assertTrue(e.contains("sample"), e);
    e = error("tracing: {endpoint: 'http://c:4317', headers_file: missing}\n");
    assertTrue(e.contains("headers_file") && e.contains("does not exist"), e);
  }

  @Test
  void headersFile_errorsNameTheLine_neverTheValue() throws IOException {
    Path h = dir.resolve("h");
    String section = "tracing: {endpoint: 'http://c:4317', headers_file: h}\n";
    Files.writeString(h, "x-api-key s3cret\n");
    String e = error(section);
    assertTrue(e.contains("line 1") && e.contains("name: value") && !e.contains("s3cret"), e);
    Files.writeString(h, "x-api-key: a\nX-Api-Key: s3cret\n");
    e = error(section);
    assertTrue(e.contains("line 2") && e.contains("twice") && !e.contains("s3cret"), e);
    Files.writeString(h, "grpc-timeout: 1S\n");
    assertTrue(error(section).contains("reserved by gRPC"));
    Files.writeString(h, "# nothing\n");
    assertTrue(error(section).contains("no 'name: value' line"));
  }
}
