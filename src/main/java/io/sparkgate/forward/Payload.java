package io.sparkgate.forward;

import com.google.protobuf.CodedInputStream;
import io.grpc.HasByteBuffer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * One response message on its way from the backend to the client. A large one stays in the transport
 * buffers it arrived in, adopted from gRPC's deframer ({@link io.grpc.Detachable}) rather than copied into
 * a new array: result batches are the proxy's bulk traffic, and nothing but the audit's row count reads them.
 * A small one, or one a hook rewrote, is an array.
 *
 * <p>Not thread-safe: a payload belongs to the thread forwarding it. Whoever drops a payload without sending
 * it must {@link #release()} it, or its transport buffers return to the pool only when collected.
 */
public final class Payload {
  /** What a reader of adopted buffers reads ahead: readers look at a few short fields and skip the rest. */
  private static final int READ_AHEAD_BYTES = 256;

  private byte[] bytes;
  private InputStream buffers; // adopted transport buffers; supports mark/reset; null once released
  private final int length;

  private Payload(byte[] bytes, InputStream buffers, int length) {
    this.bytes = bytes;
    this.buffers = buffers;
    this.length = length;
  }

  /** A payload holding these bytes (not copied). */
  public static Payload of(byte[] bytes) {
    return new Payload(bytes, null, bytes.length);
  }

  /** A payload that owns these buffers: a {@link io.grpc.KnownLength} stream that supports mark/reset. */
  static Payload adopt(InputStream buffers, int length) {
    return new Payload(null, buffers, length);
  }

  /** Size of the message in bytes. */
  public int length() {
    return length;
  }

  /**
   * The message as an array, copied out of the transport buffers (and the buffers released) the first time;
   * meant for the small messages a hook rewrites, not for result batches.
   */
  public byte[] bytes() {
    if (bytes == null) {
      InputStream in = buffers();
      try {
        bytes = in.readNBytes(length);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read an adopted message", e);
      } finally {
        release();
      }
    }
    return bytes;
  }

  /**
   * Reads the message without consuming it: the reader sees it from its first byte. An array is read in
   * place; adopted buffers through a small read-ahead, so what the reader skips is never copied.
   */
  public <T> T read(Reader<T> reader) throws IOException {
    if (bytes != null) {
      return reader.read(CodedInputStream.newInstance(bytes));
    }
    InputStream in = buffers();
    in.mark(length);
    try {
      return reader.read(CodedInputStream.newInstance(in, READ_AHEAD_BYTES));
    } finally {
      in.reset();
    }
  }

  /**
   * Reads the start of the message for a reader that usually needs only its first few bytes (a batch's row
   * count), without holding on to the rest. Where the first transport buffer holds at least {@code atLeast}
   * bytes, or the whole message, the reader sees that buffer alone, in place; should it need more than it was
   * shown it returns null, and it is given the whole message, as by {@link #read}. Its result is then the
   * same as {@link #read}'s.
   *
   * <p>Why not {@link #read} every time: reading adopted buffers through {@code mark}/{@code reset} leaves
   * gRPC's composite buffer marked for good, and a marked buffer keeps each transport buffer it has moved
   * past until it is closed, so a megabyte batch would hold all of its buffers until the last byte was sent
   * instead of handing each back to the pool as it goes out.
   */
  public <T> T readHead(int atLeast, Reader<T> reader) throws IOException {
    if (bytes == null && buffers() instanceof HasByteBuffer in && in.byteBufferSupported()) {
      ByteBuffer first = in.getByteBuffer();
      if (first != null && first.remaining() >= Math.min(atLeast, length)) {
        T seen = reader.read(CodedInputStream.newInstance(first));
        if (seen != null) {
          return seen;
        }
      }
    }
    return read(reader);
  }

  /** Hands the buffers back to the transport's pool; safe to call more than once. */
  public void release() {
    InputStream in = buffers;
    buffers = null;
    if (in != null) {
      try {
        in.close();
      } catch (IOException ignored) {
        // gRPC's buffer streams do not throw on close
      }
    }
  }

  /** For the marshaller: the adopted buffers, or null when the payload is an array. Consumed by sending. */
  InputStream takeBuffers() {
    InputStream in = buffers;
    buffers = null;
    return in;
  }

  byte[] array() {
    return bytes;
  }

  private InputStream buffers() {
    if (buffers == null) {
      throw new IllegalStateException("the payload was already sent or released");
    }
    return buffers;
  }

  /** Reads a message from its first byte. */
  @FunctionalInterface
  public interface Reader<T> {
    T read(CodedInputStream message) throws IOException;
  }
}
