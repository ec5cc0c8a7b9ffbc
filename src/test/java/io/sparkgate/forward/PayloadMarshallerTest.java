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
      ReadableBuffer frame = ReadableBuffers.wrap(message, off, len);
      composite.addBuffer(new ForwardingReadableBuffer(frame) {
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
    deframed.close(); // gRPC closes the deframer's stream after parse: the adopted buffers must survive it
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
    assertEquals(message[50_000], (byte) payload.read(in -> {
      in.skipRawBytes(50_000);
      return in.readRawByte();
    }));
    assertArrayEquals(message, payload.read(in -> in.readRawBytes(message.length)), "reads again from the first byte");
    assertArrayEquals(message, drain(PayloadMarshaller.INSTANCE.stream(payload)));
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
