package io.sparkgate.forward;

import io.grpc.MethodDescriptor;
import java.util.Map;

/** The forwarded methods with arrays both ways, for test clients and fake backends in any package. */
public final class TestMethods {
  public static final Map<String, MethodDescriptor<byte[], byte[]>> ALL =
      SparkConnectMethods.descriptors(ByteMarshaller.INSTANCE, ByteMarshaller.INSTANCE);

  /** The proxy's own byte marshaller, for test clients and fake servers that move raw messages. */
  public static final MethodDescriptor.Marshaller<byte[]> BYTES = ByteMarshaller.INSTANCE;

  private TestMethods() {}

  public static MethodDescriptor<byte[], byte[]> get(String bareName) {
    return ALL.get(SparkConnectMethods.SERVICE + "/" + bareName);
  }
}
