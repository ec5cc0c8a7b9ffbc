package io.sparkgate.forward;

import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Carries messages as the bytes received, so that whatever the proxy does not change is forwarded exactly
 * as the client or the server sent it.
 */
final class ByteMarshaller implements MethodDescriptor.Marshaller<byte[]> {
  static final ByteMarshaller INSTANCE = new ByteMarshaller();

  private ByteMarshaller() {}

  @Override
  public InputStream stream(byte[] value) {
    // grpc-java reads the length of a ByteArrayInputStream without copying it first.
    return new ByteArrayInputStream(value);
  }

  @Override
  public byte[] parse(InputStream stream) {
    try {
      if (stream instanceof KnownLength) {
        // The transport knows the framed length: read straight into an array of the right size.
        int length = stream.available();
        byte[] bytes = stream.readNBytes(length);
        if (bytes.length == length && stream.read() == -1) {
          return bytes;
        }
        throw new IOException("message shorter or longer than its announced length " + length);
      }
      return stream.readAllBytes();
    } catch (IOException e) {
      // Keep the cause: grpc-java's own proxy example drops it, which hides what went wrong.
      throw Status.INTERNAL.withDescription("cannot read message").withCause(e).asRuntimeException();
    }
  }
}
