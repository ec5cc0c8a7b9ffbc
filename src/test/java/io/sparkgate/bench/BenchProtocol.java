package io.sparkgate.bench;

import com.google.protobuf.ByteString;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.UserContext;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the benchmark client and the fake backend agree on: Spark Connect method names, request bytes that
 * say how many result batches of what size the backend should stream (as ExecutePlanRequest tags, so any
 * proxy forwards them untouched), and the canned ExecutePlanResponse batches themselves.
 */
public final class BenchProtocol {
  public static final String SERVICE = "spark.connect.SparkConnectService";
  private static final String BYTES_TAG = "bench-batch-bytes=";
  private static final String COUNT_TAG = "bench-batches=";

  /** The client's ExecutePlan: requests as bytes, responses only counted (see {@link CountingMarshaller}). */
  public static final MethodDescriptor<byte[], Integer> EXECUTE_PLAN =
      MethodDescriptor.<byte[], Integer>newBuilder(
              RawMarshaller.INSTANCE, CountingMarshaller.INSTANCE)
          .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "ExecutePlan"))
          .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
          .build();

  private static final Map<Integer, byte[]> BATCHES = new ConcurrentHashMap<>();

  private BenchProtocol() {}

  /** {@code SELECT 1}: the plan of every benchmark ExecutePlan (the backend ignores it). */
  private static final Plan PLAN =
      Plan.newBuilder()
          .setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery("SELECT 1")))
          .build();

  /** An ExecutePlanRequest asking the fake backend for {@code batches} batches of {@code batchBytes}. */
  public static byte[] executePlanRequest(String sessionId, int batchBytes, long batches) {
    return ExecutePlanRequest.newBuilder()
        .setSessionId(sessionId)
        .setUserContext(UserContext.newBuilder().setUserId("bench").setUserName("bench"))
        .setClientType("sparkgate-bench")
        // A plan every policy allows (the shipped shared-server policy refuses requests it cannot
        // classify).
        .setPlan(PLAN)
        .addTags(BYTES_TAG + batchBytes)
        .addTags(COUNT_TAG + batches)
        .build()
        .toByteArray();
  }

  /** Batch size and count asked for by a request; a request without tags gets one tiny batch. */
  record Ask(int batchBytes, long batches) {}

  static Ask parse(byte[] request) {
    int bytes = 16;
    long count = 1;
    try {
      for (String tag : ExecutePlanRequest.parseFrom(request).getTagsList()) {
        if (tag.startsWith(BYTES_TAG)) {
          bytes = Integer.parseInt(tag.substring(BYTES_TAG.length()));
        } else if (tag.startsWith(COUNT_TAG)) {
          count = Long.parseLong(tag.substring(COUNT_TAG.length()));
        }
      }
    } catch (IOException | NumberFormatException e) {
      // Not one of ours: answer the default.
    }
    return new Ask(bytes, count);
  }

  /** One ExecutePlanResponse carrying an arrow batch of {@code dataBytes}; built once per size and reused. */
  static byte[] batch(int dataBytes) {
    return BATCHES.computeIfAbsent(
        dataBytes,
        size -> {
          byte[] data = new byte[size];
          for (int i = 0; i < size; i++) {
            data[i] = (byte) (i * 31 + 7); // not all zeros, in case some hop compresses
          }
          return ExecutePlanResponse.newBuilder()
              .setSessionId("00000000-0000-0000-0000-000000000000")
              .setServerSideSessionId("00000000-0000-0000-0000-000000000001")
              .setOperationId("00000000-0000-0000-0000-000000000002")
              .setResponseId("00000000-0000-0000-0000-000000000003")
              .setArrowBatch(
                  ExecutePlanResponse.ArrowBatch.newBuilder()
                      .setRowCount(Math.max(1, size / 8))
                      .setData(ByteString.copyFrom(data)))
              .build()
              .toByteArray();
        });
  }

  /** The canned batch for micro-benchmarks outside this package. */
  public static byte[] batchForBench(int dataBytes) {
    return batch(dataBytes).clone();
  }

  /** Messages as byte arrays, unchanged. */
  public static final class RawMarshaller implements MethodDescriptor.Marshaller<byte[]> {
    public static final RawMarshaller INSTANCE = new RawMarshaller();

    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw Status.INTERNAL.withCause(e).asRuntimeException();
      }
    }
  }

  /**
   * Reads a response in full (one copy into a reused per-thread buffer, as a client that decodes would)
   * and yields only its length, so the client side does not allocate per message and is the same for
   * every proxy being compared.
   */
  public static final class CountingMarshaller implements MethodDescriptor.Marshaller<Integer> {
    public static final CountingMarshaller INSTANCE = new CountingMarshaller();
    private static final ThreadLocal<byte[]> SCRATCH =
        ThreadLocal.withInitial(() -> new byte[64 * 1024]);

    @Override
    public InputStream stream(Integer value) {
      throw new UnsupportedOperationException("responses are never sent by the client");
    }

    @Override
    public Integer parse(InputStream stream) {
      byte[] scratch = SCRATCH.get();
      int total = 0;
      try {
        if (stream instanceof KnownLength) {
          int left = stream.available();
          while (left > 0) {
            int n = stream.read(scratch, 0, Math.min(left, scratch.length));
            if (n < 0) {
              break;
            }
            total += n;
            left -= n;
          }
        }
        for (int n; (n = stream.read(scratch)) >= 0; ) {
          total += n;
        }
        stream.close();
      } catch (IOException e) {
        throw Status.INTERNAL.withCause(e).asRuntimeException();
      }
      return total;
    }
  }
}
