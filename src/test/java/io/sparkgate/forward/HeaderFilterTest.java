package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;

class HeaderFilterTest {
  private static final Metadata.Key<String> AUTHORIZATION = ascii("authorization");

  private static Metadata.Key<String> ascii(String name) {
    return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
  }

  private static Metadata.Key<byte[]> binary(String name) {
    return Metadata.Key.of(name, Metadata.BINARY_BYTE_MARSHALLER);
  }

  @Test
  void credentialsHopByHopAndGrpcTransportHeaders_dropped_restKeptWithTheirValues() {
    Metadata client = new Metadata();
    for (String dropped :
        List.of(
            "authorization",
            "authentication",
            "connection",
            "keep-alive",
            "proxy-connection",
            "proxy-authorization",
            "transfer-encoding",
            "upgrade",
            "te",
            "host",
            "content-type",
            "user-agent",
            "grpc-timeout",
            "grpc-encoding",
            "grpc-accept-encoding",
            "x-forwarded-for",
            "x-forwarded-user",
            "forwarded",
            "x-real-ip",
            "x-user",
            "spark-user",
            "x-unlisted")) {
      client.put(ascii(dropped), "x");
    }
    client.put(ascii("x-team"), "a");
    client.put(ascii("x-team"), "b");
    byte[] raw = {0, (byte) 0xff, 10, 'A'};
    client.put(binary("x-blob-bin"), raw);
    client.put(binary("grpc-trace-bin"), new byte[] {1, 2});
    client.put(binary("grpc-tags-bin"), new byte[] {3});

    Metadata out =
        new HeaderFilter(Map.of(), null, List.of("x-team", "x-blob-bin", "grpc-trace-bin"))
            .toBackend(client, null, null);

    assertEquals(Set.of("x-team", "x-blob-bin", "grpc-trace-bin"), out.keys());
    assertEquals(
        List.of("a", "b"),
        StreamSupport.stream(out.getAll(ascii("x-team")).spliterator(), false)
            .collect(Collectors.toList()));
    assertArrayEquals(raw, out.get(binary("x-blob-bin")));
    assertArrayEquals(new byte[] {1, 2}, out.get(binary("grpc-trace-bin")));
    assertNull(out.get(AUTHORIZATION));
  }

  @Test
  void backendToken_replacesTheClientsCredential() {
    Metadata client = new Metadata();
    client.put(AUTHORIZATION, "Bearer client-token");
    client.put(ascii("x-team"), "a");

    Metadata out =
        new HeaderFilter(Map.of(), "backend-secret", List.of("x-team"))
            .toBackend(client, null, null);

    assertEquals(
        List.of("Bearer backend-secret"),
        StreamSupport.stream(out.getAll(AUTHORIZATION).spliterator(), false)
            .collect(Collectors.toList()));
    assertEquals("a", out.get(ascii("x-team")));
    assertEquals(2, InternalMetadata.headerCount(out));
  }

  @Test
  void headersAsTheTransportDeliversThem_filteredAlike() {
    // The server transport builds Metadata from raw name/value bytes, not through typed keys.
    Metadata client =
        InternalMetadata.newMetadata(
            "authorization".getBytes(), "Bearer t".getBytes(), "x-id".getBytes(), "7".getBytes());

    Metadata out = new HeaderFilter(Map.of(), null, List.of("x-id")).toBackend(client, null, null);

    assertEquals(Set.of("x-id"), out.keys());
    assertEquals("7", out.get(ascii("x-id")));
  }

  @Test
  void byDefault_noClientHeaderPasses_andXForwardedForIsThePeerTheProxySees() {
    Metadata client = new Metadata();
    client.put(ascii("x-forwarded-for"), "10.9.9.9");
    client.put(ascii("x-team"), "a");
    Metadata out =
        new HeaderFilter(null).toBackend(client, null, new InetSocketAddress("127.0.0.3", 40000));
    assertEquals(Set.of("x-forwarded-for"), out.keys());
    assertEquals(
        List.of("127.0.0.3"),
        StreamSupport.stream(out.getAll(ascii("x-forwarded-for")).spliterator(), false)
            .collect(Collectors.toList()));
  }

  @Test
  void noHeaders_noneForwarded() {
    assertEquals(
        0,
        InternalMetadata.headerCount(new HeaderFilter(null).toBackend(new Metadata(), null, null)));
  }
}
