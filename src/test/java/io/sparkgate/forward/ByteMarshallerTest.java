package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.StatusRuntimeException;
import io.grpc.internal.ReadableBuffers;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.util.Random;
import org.junit.jupiter.api.Test;

final class ByteMarshallerTest {
  private static byte[] random(int n) {
    byte[] b = new byte[n];
    new Random(n).nextBytes(b);
    return b;
  }

  @Test
  void parse_knownLength_readsEveryByte() {
    for (int n : new int[] {0, 1, 8191, 8192, 8193, 1 << 20}) {
      byte[] message = random(n);
      InputStream in = ReadableBuffers.openStream(ReadableBuffers.wrap(message), true);
      assertArrayEquals(message, ByteMarshaller.INSTANCE.parse(in));
    }
  }

  @Test
  void parse_unknownLength_readsEveryByte() {
    byte[] message = random(100_000);
    assertArrayEquals(
        message,
        ByteMarshaller.INSTANCE.parse(
            new java.io.BufferedInputStream(new ByteArrayInputStream(message))));
  }

  @Test
  void parse_streamShorterThanAnnounced_keepsTheCause() {
    InputStream shortStream = new KnownLengthStream(new byte[10], 20);
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class, () -> ByteMarshaller.INSTANCE.parse(shortStream));
    assertTrue(
        e.getCause().getMessage().contains("announced length 20"), e.getCause().getMessage());
  }

  @Test
  void stream_drainsTheWholeArrayInOneWrite() throws Exception {
    byte[] message = random(70_000);
    InputStream in = ByteMarshaller.INSTANCE.stream(message);
    assertEquals(message.length, in.available());
    assertTrue(in instanceof KnownLength);
    ByteArrayOutputStream out =
        new ByteArrayOutputStream() {
          int writes;

          @Override
          public synchronized void write(byte[] b, int off, int len) {
            assertEquals(0, writes++, "one write");
            super.write(b, off, len);
          }
        };
    assertEquals(message.length, ((Drainable) in).drainTo(out));
    assertArrayEquals(message, out.toByteArray());
    assertEquals(-1, in.read());
  }

  @Test
  void stream_readsLikeAnyStream() throws Exception {
    byte[] message = random(1000);
    assertArrayEquals(message, ByteMarshaller.INSTANCE.stream(message).readAllBytes());
  }

  /** Announces more bytes than it has, like a truncated frame. */
  private static final class KnownLengthStream extends ByteArrayInputStream implements KnownLength {
    private final int announced;

    KnownLengthStream(byte[] bytes, int announced) {
      super(bytes);
      this.announced = announced;
    }

    @Override
    public synchronized int available() {
      return announced - pos;
    }
  }
}
