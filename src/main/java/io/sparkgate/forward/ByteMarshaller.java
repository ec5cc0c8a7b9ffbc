package io.sparkgate.forward;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Carries request messages as the bytes received, so that whatever the proxy does not change is forwarded
 * exactly as the client sent it; every request is inspected, so it is read into an array once on the way in
 * and copied once on the way out, with no intermediate buffers. Responses travel as {@link Payload}s
 * ({@link PayloadMarshaller}), which also uses this class for small messages.
 */
final class ByteMarshaller implements MethodDescriptor.Marshaller<byte[]> {
  static final ByteMarshaller INSTANCE = new ByteMarshaller();

  private ByteMarshaller() {}

  @Override
  public InputStream stream(byte[] value) {
    return new ArrayStream(value);
  }

  @Override
  public byte[] parse(InputStream stream) {
    try {
      if (stream instanceof KnownLength) {
        // The transport knows the framed length: read straight into an array of the right size.
        // (InputStream.readNBytes(int) would read in 8 KiB chunks and copy them all again at the
        // end.)
        int length = stream.available();
        byte[] bytes = new byte[length];
        int read = 0;
        while (read < length) {
          int n = stream.read(bytes, read, length - read);
          if (n < 0) {
            break;
          }
          read += n;
        }
        if (read == length && stream.read() == -1) {
          return bytes;
        }
        throw new IOException("message shorter or longer than its announced length " + length);
      }
      return stream.readAllBytes();
    } catch (IOException e) {
      // Keep the cause: grpc-java's own proxy example drops it, which hides what went wrong.
      throw Status.INTERNAL
          .withDescription("cannot read message")
          .withCause(e)
          .asRuntimeException();
    }
  }

  /**
   * The array as a stream grpc-java can size without copying (it reads a ByteArrayInputStream's length
   * directly) and drain in one write: without {@link Drainable}, its framer copies the message through an
   * 8 KiB intermediate buffer.
   */
  private static final class ArrayStream extends ByteArrayInputStream
      implements Drainable, KnownLength {
    ArrayStream(byte[] bytes) {
      super(bytes);
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
      int length = count - pos;
      target.write(buf, pos, length);
      pos = count;
      return length;
    }
  }
}
