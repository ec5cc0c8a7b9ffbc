package io.sparkgate.forward;

import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import io.sparkgate.proto.spark.Base;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The methods the proxy forwards: every RPC of {@code spark.connect.SparkConnectService} released from Spark
 * 3.5 to 4.2, with its streaming shape read from the generated descriptor. Anything else is unknown and
 * refused, so an RPC added by a later Spark release is never forwarded before someone has looked at it.
 */
final class SparkConnectMethods {
  static final String SERVICE = "spark.connect.SparkConnectService";

  /** Reviewed against the 3.5, 4.0, 4.1 and 4.2 protos (docs/forwarding.md). */
  private static final Set<String> ALLOWED =
      Set.of(
          "ExecutePlan",
          "AnalyzePlan",
          "Config",
          "AddArtifacts",
          "ArtifactStatus",
          "Interrupt",
          "ReattachExecute",
          "ReleaseExecute",
          "ReleaseSession",
          "FetchErrorDetails",
          "CloneSession",
          "GetStatus");

  private SparkConnectMethods() {}

  /**
   * Full method name to gRPC method descriptor, for every allowed method: requests as arrays (every one is
   * inspected), responses as {@link Payload}s (result batches are forwarded from the buffers they came in).
   */
  static Map<String, io.grpc.MethodDescriptor<byte[], Payload>> descriptors() {
    return descriptors(ByteMarshaller.INSTANCE, PayloadMarshaller.INSTANCE);
  }

  /** The same methods with the given marshallers (tests' clients and backends use arrays both ways). */
  static <ReqT, RespT> Map<String, io.grpc.MethodDescriptor<ReqT, RespT>> descriptors(
      io.grpc.MethodDescriptor.Marshaller<ReqT> requests,
      io.grpc.MethodDescriptor.Marshaller<RespT> responses) {
    ServiceDescriptor service = Base.getDescriptor().findServiceByName("SparkConnectService");
    Map<String, io.grpc.MethodDescriptor<ReqT, RespT>> out = new LinkedHashMap<>();
    for (MethodDescriptor method : service.getMethods()) {
      if (!ALLOWED.contains(method.getName())) {
        continue;
      }
      String fullName = io.grpc.MethodDescriptor.generateFullMethodName(SERVICE, method.getName());
      out.put(
          fullName,
          io.grpc.MethodDescriptor.newBuilder(requests, responses)
              .setFullMethodName(fullName)
              .setType(type(method))
              .build());
    }
    if (out.size() != ALLOWED.size()) {
      throw new IllegalStateException(
          "the generated Spark Connect protos lack some allowed methods: " + out.keySet());
    }
    return Map.copyOf(out);
  }

  /**
   * The shape the proxy's server side registers a method with: client-streaming whatever the method's own
   * shape. gRPC's server resets the stream of a one-request method at a second request message (RST_STREAM,
   * which clients show as CANCELLED); registered this way every message reaches {@link ForwardingCall},
   * which counts them against the method's real shape and refuses with a clear INVALID_ARGUMENT instead.
   */
  static <ReqT, RespT> io.grpc.MethodDescriptor<ReqT, RespT> clientStreaming(
      io.grpc.MethodDescriptor<ReqT, RespT> method) {
    return method.toBuilder()
        .setType(
            method.getType().serverSendsOneMessage()
                ? io.grpc.MethodDescriptor.MethodType.CLIENT_STREAMING
                : io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
        .build();
  }

  private static io.grpc.MethodDescriptor.MethodType type(MethodDescriptor method) {
    if (method.isClientStreaming()) {
      return method.isServerStreaming()
          ? io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING
          : io.grpc.MethodDescriptor.MethodType.CLIENT_STREAMING;
    }
    return method.isServerStreaming()
        ? io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING
        : io.grpc.MethodDescriptor.MethodType.UNARY;
  }
}
