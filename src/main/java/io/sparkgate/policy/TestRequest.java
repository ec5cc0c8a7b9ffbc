package io.sparkgate.policy;

import com.google.protobuf.ByteString;
import io.sparkgate.proto.spark.AddArtifactsRequest;
import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.KeyValue;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.yaml.YamlNode;
import java.util.Map;
import java.util.zip.CRC32;

/** Builds the request bytes a policy test case describes, as the Spark clients would send them. */
final class TestRequest {
  static final String SESSION = "00000000-0000-4000-8000-000000000001";

  private TestRequest() {}

  static UserContext user(String name) {
    return UserContext.newBuilder().setUserId(name).setUserName(name).build();
  }

  static byte[] sql(String text, String user) {
    return ExecutePlanRequest.newBuilder()
        .setSessionId(SESSION)
        .setUserContext(user(user))
        .setOperationId("00000000-0000-4000-8000-0000000000aa")
        .setClientType("sparkgate-policy-test")
        .setPlan(
            Plan.newBuilder()
                .setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery(text))))
        .build()
        .toByteArray();
  }

  /**
   * A plan written as protobuf JSON (the Spark Connect proto's field names), for cases only the DataFrame API
   * sends: {@code {"root": {"project": {...}}}} or {@code {"command": {...}}}.
   */
  static byte[] plan(YamlNode json, String user) {
    Plan.Builder plan = Plan.newBuilder();
    try {
      com.google.protobuf.util.JsonFormat.parser().merge(json.text(), plan);
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw json.error("not a spark.connect.Plan in protobuf JSON: " + e.getMessage());
    }
    return ExecutePlanRequest.newBuilder()
        .setSessionId(SESSION)
        .setUserContext(user(user))
        .setOperationId("00000000-0000-4000-8000-0000000000aa")
        .setClientType("sparkgate-policy-test")
        .setPlan(plan)
        .build()
        .toByteArray();
  }

  /**
   * An AnalyzePlan request written as protobuf JSON without its session and user: {@code {"persist":
   * {"relation": {...}}}}, {@code {"unpersist": ...}}, {@code {"getStorageLevel": ...}}.
   */
  static byte[] analyze(YamlNode json, String user) {
    AnalyzePlanRequest.Builder request = AnalyzePlanRequest.newBuilder();
    try {
      com.google.protobuf.util.JsonFormat.parser().merge(json.text(), request);
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw json.error(
          "not a spark.connect.AnalyzePlanRequest in protobuf JSON: " + e.getMessage());
    }
    return request.setSessionId(SESSION).setUserContext(user(user)).build().toByteArray();
  }

  /** A relation written as protobuf JSON (cached_plans of a case). */
  static Relation relation(YamlNode json) {
    Relation.Builder relation = Relation.newBuilder();
    try {
      com.google.protobuf.util.JsonFormat.parser().merge(json.text(), relation);
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw json.error("not a spark.connect.Relation in protobuf JSON: " + e.getMessage());
    }
    return relation.build();
  }

  static byte[] configSet(Map<String, String> pairs, String user) {
    ConfigRequest.Set.Builder set = ConfigRequest.Set.newBuilder();
    pairs.forEach((k, v) -> set.addPairs(KeyValue.newBuilder().setKey(k).setValue(v)));
    return ConfigRequest.newBuilder()
        .setSessionId(SESSION)
        .setUserContext(user(user))
        .setOperation(ConfigRequest.Operation.newBuilder().setSet(set))
        .build()
        .toByteArray();
  }

  static byte[] configGet(Iterable<String> keys, String user) {
    return ConfigRequest.newBuilder()
        .setSessionId(SESSION)
        .setUserContext(user(user))
        .setOperation(
            ConfigRequest.Operation.newBuilder()
                .setGet(ConfigRequest.Get.newBuilder().addAllKeys(keys)))
        .build()
        .toByteArray();
  }

  static byte[] artifact(String name, String user) {
    byte[] data = "not really a jar".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    CRC32 crc = new CRC32();
    crc.update(data);
    return AddArtifactsRequest.newBuilder()
        .setSessionId(SESSION)
        .setUserContext(user(user))
        .setBatch(
            AddArtifactsRequest.Batch.newBuilder()
                .addArtifacts(
                    AddArtifactsRequest.SingleChunkArtifact.newBuilder()
                        .setName(name)
                        .setData(
                            AddArtifactsRequest.ArtifactChunk.newBuilder()
                                .setData(ByteString.copyFrom(data))
                                .setCrc(crc.getValue()))))
        .build()
        .toByteArray();
  }

  /**
   * A request with only a session and user: ReleaseSession, Interrupt, ... (fields 1 and 2 in every RPC). An
   * ExecutePlan gets a plan that yields no fact (range), since one without a plan is itself unreadable.
   */
  static byte[] bare(String rpc, String user) {
    ExecutePlanRequest.Builder b =
        ExecutePlanRequest.newBuilder().setSessionId(SESSION).setUserContext(user(user));
    if (rpc.equals("ExecutePlan"))
      b.setPlan(
          io.sparkgate.proto.spark.Plan.newBuilder()
              .setRoot(
                  io.sparkgate.proto.spark.Relation.newBuilder()
                      .setRange(io.sparkgate.proto.spark.Range.newBuilder().setEnd(1))));
    return b.build().toByteArray();
  }
}
