package io.sparkgate.forward;

import io.grpc.Detachable;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Response messages as {@link Payload}s. A large message keeps the transport buffers it arrived in and is
 * copied once, on the way out, through a small per-thread scratch array: gRPC's framer takes only arrays,
 * but a 32 KiB copy stays in cache, where reading the message into a fresh array of its own size
 * (zero-filled, a megabyte for a typical Arrow batch, then garbage) does not.
 */
final class PayloadMarshaller implements MethodDescriptor.Marshaller<Payload> {
  static final PayloadMarshaller INSTANCE = new PayloadMarshaller();

  /** Smaller messages are copied into an array: cheap, and they hold no transport buffers. */
  static final int ADOPT_BYTES = 32 * 1024;

  private static final int SCRATCH_BYTES = 32 * 1024;
  private static final ThreadLocal<byte[]> SCRATCH =
      ThreadLocal.withInitial(() -> new byte[SCRATCH_BYTES]);

  private PayloadMarshaller() {}

  @Override
  public InputStream stream(Payload payload) {
    byte[] array = payload.array();
    if (array != null) {
      return ByteMarshaller.INSTANCE.stream(array);
    }
    InputStream buffers = payload.takeBuffers();
    if (buffers == null) {
      throw new IllegalStateException("the payload was already sent or released");
    }
    return new BufferDrain(buffers);
  }

  @Override
  public Payload parse(InputStream stream) {
    if (stream instanceof Detachable detachable
        && stream instanceof KnownLength
        && stream.markSupported()) {
      try {
        int length = stream.available();
        if (length >= ADOPT_BYTES) {
          return Payload.adopt(detachable.detach(), length);
        }
      } catch (IOException e) {
        // fall through: the array path reports it with its cause
      }
    }
    return Payload.of(ByteMarshaller.INSTANCE.parse(stream));
  }

  /** Adopted buffers on their way into the framer; gRPC closes it, which releases them. */
  private static final class BufferDrain extends InputStream implements Drainable, KnownLength {
    private final InputStream buffers;

    BufferDrain(InputStream buffers) {
      this.buffers = buffers;
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
      byte[] scratch = SCRATCH.get();
      int total = 0;
      int n;
      while ((n = buffers.read(scratch, 0, scratch.length)) > 0) {
        target.write(scratch, 0, n);
        total += n;
      }
      return total;
    }

    @Override
    public int available() throws IOException {
      return buffers.available();
    }

    @Override
    public int read() throws IOException {
      return buffers.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      return buffers.read(b, off, len);
    }

    @Override
    public void close() throws IOException {
      buffers.close();
    }
  }
}
