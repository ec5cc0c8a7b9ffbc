package io.sparkgate.forward;

import io.grpc.MethodDescriptor;
import java.util.Map;

/** The forwarded method descriptors, for tests in other packages. */
public final class TestMethods {
  public static final Map<String, MethodDescriptor<byte[], byte[]>> ALL = SparkConnectMethods.descriptors();

  private TestMethods() {}

  public static MethodDescriptor<byte[], byte[]> get(String bareName) {
    return ALL.get(SparkConnectMethods.SERVICE + "/" + bareName);
  }
}
