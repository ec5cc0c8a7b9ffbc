package io.sparkgate.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TLS records a client receives, read off the wire by a relay between it and a server using
 * {@link ServerTls#protocolNegotiator()}: a bulk response is encrypted write by write (every HTTP/2 DATA frame
 * header a record of its own, so its payload was not copied to join it), a small one packed.
 */
final class TlsRecordsTest {
  /** TLS 1.3 with an AEAD cipher: a record's length is its plaintext + 1 (content type) + 16 (tag). */
  private static final int LONE_FRAME_HEADER_RECORD = 9 + 1 + 16;
  private static final MethodDescriptor<byte[], byte[]> GET = MethodDescriptor.<byte[], byte[]>newBuilder()
      .setType(MethodDescriptor.MethodType.UNARY)
      .setFullMethodName("test.Bulk/Get")
      .setRequestMarshaller(Bytes.INSTANCE)
      .setResponseMarshaller(Bytes.INSTANCE)
      .build();

  @TempDir Path dir;
  private ServerTls tls;
  private Server server;
  private RecordRelay relay;
  private ManagedChannel channel;

  @AfterEach
  void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (relay != null) {
      relay.close();
    }
    TlsTestSupport.stop(server);
    if (tls != null) {
      tls.close();
    }
  }

  @Test
  void bulkResponsesAreEncryptedWriteByWriteAndSmallOnesPacked() throws Exception {
    DevCertificates.Generated certs = DevCertificates.generate(dir, DevCertificates.Options.defaults());
    tls = ServerTls.load(certs.serverCert(), certs.serverKey(), null, null);
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .protocolNegotiator(tls.protocolNegotiator())
        .addService(ServerServiceDefinition.builder("test.Bulk")
            .addMethod(GET, ServerCalls.asyncUnaryCall((request, response) -> {
              response.onNext(pattern(ByteBuffer.wrap(request).getInt()));
              response.onCompleted();
            }))
            .build())
        .build()
        .start();
    relay = new RecordRelay(server.getPort());
    channel = NettyChannelBuilder.forAddress("127.0.0.1", relay.port())
        .sslContext(TlsTestSupport.clientContext(certs.caCert(), "TLSv1.3"))
        .overrideAuthority("localhost")
        .build();
    get(100); // handshake and connection set-up out of the way

    relay.records.clear();
    assertArrayEquals(pattern(100), get(100));
    List<Integer> small = relay.snapshot();
    assertTrue(!small.isEmpty() && !small.contains(LONE_FRAME_HEADER_RECORD), "small response packed: " + small);

    relay.records.clear();
    int size = 1 << 20;
    assertArrayEquals(pattern(size), get(size));
    List<Integer> bulk = relay.snapshot();
    long loneHeaders = bulk.stream().filter(n -> n == LONE_FRAME_HEADER_RECORD).count();
    // 1 MiB in 16 KiB DATA frames: 64 frames, each header alone in a record.
    assertTrue(loneHeaders >= 64, loneHeaders + " lone frame-header records in " + bulk.size());
    assertEquals(16 * 1024 + 1 + 16, bulk.stream().mapToInt(Integer::intValue).max().orElse(0),
        "payload records are full-size");

    relay.records.clear();
    assertArrayEquals(pattern(4096), get(4096)); // below TlsRecords.BULK_BYTES
    assertFalse(relay.snapshot().contains(LONE_FRAME_HEADER_RECORD), "a 4 KiB response after bulk is packed again: " + relay.snapshot());
  }

  private byte[] get(int size) {
    return ClientCalls.blockingUnaryCall(channel, GET, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
        ByteBuffer.allocate(4).putInt(size).array());
  }

  private static byte[] pattern(int size) {
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) {
      b[i] = (byte) (i * 31 + 7);
    }
    return b;
  }

  private enum Bytes implements MethodDescriptor.Marshaller<byte[]> {
    INSTANCE;

    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** Relays one TCP connection and records the length field of every TLS record the server sends. */
  private static final class RecordRelay implements AutoCloseable {
    final List<Integer> records = Collections.synchronizedList(new ArrayList<>());
    private final ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    private final List<Socket> sockets = Collections.synchronizedList(new ArrayList<>());

    RecordRelay(int serverPort) throws IOException {
      Thread accept = new Thread(() -> {
        try (Socket client = listener.accept(); Socket upstream = new Socket("127.0.0.1", serverPort)) {
          sockets.add(client);
          sockets.add(upstream);
          Thread up = new Thread(() -> pump(client, upstream, false));
          up.setDaemon(true);
          up.start();
          pump(upstream, client, true);
          up.join();
        } catch (IOException | InterruptedException e) {
          // closed by the test
        }
      }, "record-relay");
      accept.setDaemon(true);
      accept.start();
    }

    int port() {
      return listener.getLocalPort();
    }

    List<Integer> snapshot() {
      synchronized (records) {
        return List.copyOf(records);
      }
    }

    private void pump(Socket from, Socket to, boolean parse) {
      byte[] header = new byte[5];
      int headerHave = 0;
      int bodyLeft = 0;
      byte[] buf = new byte[64 * 1024];
      try {
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        int n;
        while ((n = in.read(buf)) > 0) {
          // Parse before forwarding, so a record is counted before the client can have read it.
          for (int i = 0; parse && i < n; ) {
            if (bodyLeft > 0) {
              int skip = Math.min(bodyLeft, n - i);
              bodyLeft -= skip;
              i += skip;
            } else {
              header[headerHave++] = buf[i++];
              if (headerHave == 5) {
                bodyLeft = ((header[3] & 0xff) << 8) | (header[4] & 0xff);
                records.add(bodyLeft);
                headerHave = 0;
              }
            }
          }
          out.write(buf, 0, n);
          out.flush();
        }
        to.shutdownOutput();
      } catch (IOException e) {
        // connection closed
      }
    }

    @Override
    public void close() throws IOException {
      listener.close();
      synchronized (sockets) {
        for (Socket s : sockets) {
          s.close();
        }
      }
    }
  }
}
