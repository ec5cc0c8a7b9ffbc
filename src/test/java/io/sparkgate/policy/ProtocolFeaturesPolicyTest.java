package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import com.google.protobuf.ByteString;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import io.sparkgate.cli.CliPolicyCompiler;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.InspectorConfig;
import io.sparkgate.proto.spark.CommonInlineUserDefinedFunction;
import io.sparkgate.proto.spark.CompressionCodec;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Project;
import io.sparkgate.proto.spark.PythonUDF;
import io.sparkgate.proto.spark.Range;
import io.sparkgate.proto.spark.Relation;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A compressed plan (Spark 4.1+) is decided as its plain form is, by the shipped policy, and the refusal is
 * one no client retries.
 */
final class ProtocolFeaturesPolicyTest {
  private static final BackendProfile PROFILE =
      new BackendProfile("4.1.0", List.of(), Map.of(), null);
  private final Policy shared =
      CliPolicyCompiler.get().compile(Path.of("policies/shared-server.yaml"));

  private Decision decide(Inspector inspector, Plan plan) {
    byte[] request =
        ExecutePlanRequest.newBuilder()
            .setSessionId("00000000-0000-4000-8000-000000000001")
            .setPlan(plan)
            .build()
            .toByteArray();
    Facts facts = inspector.inspect("ExecutePlan", request, PROFILE.freshSession());
    PolicyEngine engine = new PolicyEngine(() -> shared, ProfileSource.fixed(PROFILE));
    return engine.decide("ExecutePlan", "alice", List.of(), "", engine.enrich(facts));
  }

  /** df.select(udf(...)) as PySpark sends it. */
  private static Relation pythonUdf(String padding) {
    return Relation.newBuilder()
        .setProject(
            Project.newBuilder()
                .setInput(Relation.newBuilder().setRange(Range.newBuilder().setEnd(3).setStep(1)))
                .addExpressions(
                    io.sparkgate.proto.spark.Expression.newBuilder()
                        .setCommonInlineUserDefinedFunction(
                            CommonInlineUserDefinedFunction.newBuilder()
                                .setFunctionName("f" + padding)
                                .setPythonUdf(
                                    PythonUDF.newBuilder()
                                        .setEvalType(100)
                                        .setPythonVer("3.11")
                                        .setCommand(ByteString.copyFromUtf8("pickled"))))))
        .build();
  }

  private static Plan compressed(Relation r) {
    return Plan.newBuilder()
        .setCompressedOperation(
            Plan.CompressedOperation.newBuilder()
                .setData(ByteString.copyFrom(Zstd.compress(r.toByteArray())))
                .setOpType(Plan.CompressedOperation.OpType.OP_TYPE_RELATION)
                .setCompressionCodec(CompressionCodec.COMPRESSION_CODEC_ZSTD))
        .build();
  }

  @Test
  void compressedPythonUdf_refusedByTheSameRuleAsThePlainOne() {
    Inspector inspector = new Inspector();
    Decision plain = decide(inspector, Plan.newBuilder().setRoot(pythonUdf("")).build());
    Decision packed = decide(inspector, compressed(pythonUdf("")));

    assertEquals(Effect.DENY, plain.effect());
    assertEquals("no-user-code", plain.rule());
    assertEquals(plain.effect(), packed.effect());
    assertEquals(plain.rule(), packed.rule());
    assertEquals(plain.message(), packed.message());
  }

  @Test
  void compressedPlanOverTheBound_refusedAsUninspectable_notRetryable() {
    Inspector bounded = new Inspector(InspectorConfig.DEFAULTS.withMaxDecompressedBytes(1 << 20));
    Decision d = decide(bounded, compressed(pythonUdf("x".repeat(2 << 20))));

    assertEquals(Effect.DENY, d.effect());
    assertEquals("no-unclassified", d.rule());
    assertTrue(d.message().contains("compressed_plan_too_large"), d.message());
    com.google.rpc.Status status = StatusProto.fromThrowable(Refusals.toException(d));
    assertEquals(Status.Code.PERMISSION_DENIED.value(), status.getCode());
    assertFalse(status.getDetailsList().stream().anyMatch(a -> a.is(RetryInfo.class)));
    ErrorInfo info =
        status.getDetailsList().stream()
            .filter(a -> a.is(ErrorInfo.class))
            .map(
                a -> {
                  try {
                    return a.unpack(ErrorInfo.class);
                  } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    throw new AssertionError(e);
                  }
                })
            .findFirst()
            .orElseThrow();
    assertFalse(info.getMetadataMap().containsKey("errorId"), info.toString());
    assertEquals("42501", info.getMetadataMap().get("sqlState"));
  }
}
