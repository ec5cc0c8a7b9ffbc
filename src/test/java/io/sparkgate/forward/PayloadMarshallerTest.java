package io.sparkgate.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.internal.CompositeReadableBuffer;
import io.grpc.internal.ForwardingReadableBuffer;
import io.grpc.internal.ReadableBuffer;
import io.grpc.internal.ReadableBuffers;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Response payloads as gRPC's deframer hands them over: a stream over several transport buffers. */
final class PayloadMarshallerTest {
  private final AtomicInteger closed = new AtomicInteger();

  /** The message split into 16 KiB buffers, like the DATA frames it arrived in; each counts its close. */
  private InputStream received(byte[] message) {
    CompositeReadableBuffer composite = new CompositeReadableBuffer();
    for (int off = 0; off < message.length; off += 16 * 1024) {
      int len = Math.min(16 * 1024, message.length - off);
      // Over a ByteBuffer, which like Netty's buffers can show its bytes in place (HasByteBuffer).
      ReadableBuffer frame = ReadableBuffers.wrap(ByteBuffer.wrap(message, off, len).slice());
      composite.addBuffer(
          new ForwardingReadableBuffer(frame) {
            @Override
            public void close() {
              closed.incrementAndGet();
              super.close();
            }
          });
    }
    return ReadableBuffers.openStream(composite, true);
  }

  private static byte[] random(int n) {
    byte[] b = new byte[n];
    new Random(n).nextBytes(b);
    return b;
  }

  private static byte[] drain(InputStream in) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    assertEquals(in.available(), ((Drainable) in).drainTo(out));
    in.close(); // as gRPC's framer does once written
    return out.toByteArray();
  }

  @Test
  void largeMessage_isAdoptedNotCopied_andForwardedByteForByte() throws Exception {
    byte[] message = random(1 << 20);
    InputStream deframed = received(message);
    Payload payload = PayloadMarshaller.INSTANCE.parse(deframed);
    assertNull(payload.array(), "adopted, not copied");
    assertEquals(message.length, payload.length());
    deframed
        .close(); // gRPC closes the deframer's stream after parse: the adopted buffers must survive
    // it
    assertEquals(0, closed.get());

    InputStream out = PayloadMarshaller.INSTANCE.stream(payload);
    assertTrue(out instanceof KnownLength);
    assertArrayEquals(message, drain(out));
    assertEquals(64, closed.get(), "every transport buffer released once sent");
  }

  @Test
  void smallMessage_isCopiedIntoAnArray_andHoldsNoBuffers() throws Exception {
    byte[] message = random(PayloadMarshaller.ADOPT_BYTES - 1);
    InputStream deframed = received(message);
    Payload payload = PayloadMarshaller.INSTANCE.parse(deframed);
    deframed.close();
    assertNotNull(payload.array());
    assertArrayEquals(message, drain(PayloadMarshaller.INSTANCE.stream(payload)));
  }

  @Test
  void read_seesTheWholeMessage_withoutConsumingIt() throws Exception {
    byte[] message = random(100_000);
    Payload payload = PayloadMarshaller.INSTANCE.parse(received(message));
    assertArrayEquals(message, payload.read(in -> in.readRawBytes(message.length)));
    assertEquals(
        message[50_000],
        (byte)
            payload.read(
                in -> {
                  in.skipRawBytes(50_000);
                  return in.readRawByte();
                }));
    assertArrayEquals(
        message,
        payload.read(in -> in.readRawBytes(message.length)),
        "reads again from the first byte");
    assertArrayEquals(message, drain(PayloadMarshaller.INSTANCE.stream(payload)));
  }

  @Test
  void readHead_readsTheFirstBufferInPlace_andSendingStillReleasesBuffersAsItGoes()
      throws Exception {
    byte[] message = random(1 << 20);
    Payload payload = PayloadMarshaller.INSTANCE.parse(received(message));
    // The reader is shown the first 16 KiB buffer only.
    int shown =
        payload.readHead(
            256,
            in -> {
              in.skipRawBytes(16 * 1024 - 1);
              in.readRawByte();
              return in.isAtEnd() ? 16 * 1024 : -1;
            });
    assertEquals(16 * 1024, shown);
    // Read through mark/reset instead, the buffers sent would stay held until the end (gRPC keeps
    // what a marked composite buffer moves past): here each one goes back as soon as it has been
    // read out.
    InputStream out = PayloadMarshaller.INSTANCE.stream(payload);
    byte[] sent = new byte[message.length];
    int first = out.read(sent, 0, 5 * 16 * 1024);
    assertTrue(
        closed.get() >= 4,
        "released while sending: " + closed.get() + " after " + first + " bytes");
    int rest = out.readNBytes(sent, first, message.length - first);
    out.close();
    assertEquals(message.length, first + rest);
    assertArrayEquals(message, sent);
    assertEquals(64, closed.get());
  }

  @Test
  void readHead_showsTheWholeMessage_whenTheReaderNeedsMore_orTheFirstBufferIsShort()
      throws Exception {
    byte[] message = random(100_000);
    Payload payload = PayloadMarshaller.INSTANCE.parse(received(message));
    int[] calls = {0};
    // Null asks for more: the second call sees the whole message from its first byte.
    byte read =
        payload.readHead(
            256,
            in -> {
              if (calls[0]++ == 0) return null;
              in.skipRawBytes(50_000);
              return in.readRawByte();
            });
    assertEquals(message[50_000], read);
    assertEquals(2, calls[0]);
    // A first buffer shorter than what the reader needs is not shown alone.
    CompositeReadableBuffer composite = new CompositeReadableBuffer();
    composite.addBuffer(ReadableBuffers.wrap(ByteBuffer.wrap(message, 0, 10).slice()));
    composite.addBuffer(
        ReadableBuffers.wrap(ByteBuffer.wrap(message, 10, message.length - 10).slice()));
    Payload split = PayloadMarshaller.INSTANCE.parse(ReadableBuffers.openStream(composite, true));
    assertArrayEquals(Arrays.copyOf(message, 256), split.readHead(256, in -> in.readRawBytes(256)));
    assertArrayEquals(message, drain(PayloadMarshaller.INSTANCE.stream(split)));
  }

  @Test
  void bytes_materialisesOnce_andReleasesTheBuffers() {
    byte[] message = random(40_000);
    Payload payload = PayloadMarshaller.INSTANCE.parse(received(message));
    assertArrayEquals(message, payload.bytes());
    assertEquals(3, closed.get());
    assertArrayEquals(message, payload.bytes());
  }

  @Test
  void release_returnsTheBuffers_andASecondSendIsRefused() throws Exception {
    Payload payload = PayloadMarshaller.INSTANCE.parse(received(random(64 * 1024)));
    payload.release();
    payload.release();
    assertEquals(4, closed.get(), "each buffer closed exactly once");
    assertThrows(IllegalStateException.class, () -> PayloadMarshaller.INSTANCE.stream(payload));
    assertThrows(IllegalStateException.class, () -> payload.read(in -> in.readRawBytes(1)));
  }
}
