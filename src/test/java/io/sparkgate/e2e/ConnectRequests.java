package io.sparkgate.e2e;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Read;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.UserContext;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.util.Text;

/**
 * Drives a Spark Connect server (3.5 included) with requests built from the protos, as no 3.5 JVM client can
 * be used: ExecutePlan with {@code plan.root.sql.query} (what 3.5 reads) or a data source read, and the
 * result's Arrow batches decoded into rows of plain Java values (Long, Double, String, ...).
 */
final class ConnectRequests {
  static final MethodDescriptor<byte[], byte[]> EXECUTE_PLAN =
      MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
          .setFullMethodName("spark.connect.SparkConnectService/ExecutePlan")
          .setRequestMarshaller(TestMethods.BYTES)
          .setResponseMarshaller(TestMethods.BYTES)
          .build();

  private final Channel channel;
  private final String sessionId = UUID.randomUUID().toString();
  private final String userId;

  ConnectRequests(Channel channel, String userId) {
    this.channel = channel;
    this.userId = userId;
  }

  static ExecutePlanRequest sqlRequest(String sessionId, String userId, String sql) {
    return request(
        sessionId, userId, Relation.newBuilder().setSql(SQL.newBuilder().setQuery(sql)).build());
  }

  static ExecutePlanRequest request(String sessionId, String userId, Relation root) {
    return ExecutePlanRequest.newBuilder()
        .setSessionId(sessionId)
        .setUserContext(UserContext.newBuilder().setUserId(userId))
        .setOperationId(UUID.randomUUID().toString())
        .setClientType("sparkgate-e2e")
        .setPlan(Plan.newBuilder().setRoot(root))
        .build();
  }

  /** Runs SQL and returns its rows; throws StatusRuntimeException with the server's (or proxy's) status. */
  List<List<Object>> sql(String sql) {
    return execute(sqlRequest(sessionId, userId, sql));
  }

  /** spark.read.format(format).options(options).load(path). */
  List<List<Object>> read(String format, Map<String, String> options, String path) {
    Read.DataSource.Builder ds =
        Read.DataSource.newBuilder().setFormat(format).putAllOptions(options).addPaths(path);
    return execute(
        request(
            sessionId,
            userId,
            Relation.newBuilder().setRead(Read.newBuilder().setDataSource(ds)).build()));
  }

  List<List<Object>> execute(ExecutePlanRequest request) {
    Iterator<byte[]> responses =
        ClientCalls.blockingServerStreamingCall(
            channel,
            EXECUTE_PLAN,
            CallOptions.DEFAULT.withDeadlineAfter(180, TimeUnit.SECONDS),
            request.toByteArray());
    List<List<Object>> rows = new ArrayList<>();
    while (responses.hasNext()) {
      ExecutePlanResponse response;
      try {
        response = ExecutePlanResponse.parseFrom(responses.next());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      if (response.hasArrowBatch())
        rows.addAll(decode(response.getArrowBatch().getData().toByteArray()));
    }
    return rows;
  }

  static List<List<Object>> decode(byte[] ipc) {
    List<List<Object>> rows = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator();
        ArrowStreamReader reader =
            new ArrowStreamReader(new ByteArrayInputStream(ipc), allocator)) {
      VectorSchemaRoot root = reader.getVectorSchemaRoot();
      while (reader.loadNextBatch()) {
        for (int i = 0; i < root.getRowCount(); i++) {
          List<Object> row = new ArrayList<>();
          for (FieldVector v : root.getFieldVectors()) {
            Object value = v.getObject(i);
            row.add(value instanceof Text t ? t.toString() : value);
          }
          rows.add(row);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }
}
