package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

final class PlanSummaryTest {
  private static final io.sparkgate.config.SecretPatterns SECRETS =
      new io.sparkgate.config.SecretPatterns(
          io.sparkgate.config.AuthConfig.disabled().secretPatterns());

  private static final Fact REQUEST =
      new Fact(Fact.Kind.REQUEST, "ExecutePlan", Map.of("method", "ExecutePlan"));

  @Test
  void compressedPlan_isShownAsCompressed() {
    Fact compressed =
        new Fact(
            Fact.Kind.COMPRESSED_PLAN,
            "zstd",
            Map.of("op_type", "relation", "compressed_bytes", "40", "inflated_bytes", "120"));

    Map<String, Object> summary =
        new PlanSummary(false, SECRETS).add(Facts.of(List.of(REQUEST, compressed))).toMap();

    assertEquals(true, summary.get("compressed"), summary.toString());
    assertEquals(List.of("rpc:ExecutePlan"), summary.get("kinds"));
  }

  @Test
  void plainPlan_hasNoCompressedField() {
    Map<String, Object> summary =
        new PlanSummary(false, SECRETS).add(Facts.of(List.of(REQUEST))).toMap();

    assertFalse(summary.containsKey("compressed"), summary.toString());
  }

  /** An allowed or refused call can be understood from its record: the expression text, and what it held. */
  @Test
  void expressionStrings_andPaths_areShown_literalsAndCredentialsNot() {
    io.sparkgate.inspect.Inspector inspector = new io.sparkgate.inspect.Inspector();
    Facts facts =
        inspector.inspect(
            "ExecutePlan",
            io.sparkgate.proto.spark.ExecutePlanRequest.newBuilder()
                .setSessionId("s")
                .setPlan(
                    io.sparkgate.proto.spark.Plan.newBuilder()
                        .setRoot(
                            io.sparkgate.proto.spark.Relation.newBuilder()
                                .setProject(
                                    io.sparkgate.proto.spark.Project.newBuilder()
                                        .setInput(
                                            io.sparkgate.proto.spark.Relation.newBuilder()
                                                .setRead(
                                                    io.sparkgate.proto.spark.Read.newBuilder()
                                                        .setDataSource(
                                                            io.sparkgate.proto.spark.Read.DataSource
                                                                .newBuilder()
                                                                .setFormat("parquet")
                                                                .addPaths(
                                                                    "s3a://AKIA:secret@bucket/d"))))
                                        .addExpressions(
                                            io.sparkgate.proto.spark.Expression.newBuilder()
                                                .setExpressionString(
                                                    io.sparkgate.proto.spark.Expression
                                                        .ExpressionString.newBuilder()
                                                        .setExpression(
                                                            "upper(name) || 'secret value'"))))))
                .build()
                .toByteArray(),
            io.sparkgate.inspect.SessionView.DEFAULT);

    Map<String, Object> summary = new PlanSummary(false, SECRETS).add(facts).toMap();

    assertEquals(List.of("upper(name) || ?"), summary.get("expressions"), summary.toString());
    assertEquals(List.of("s3a://***@bucket/d"), summary.get("paths"), summary.toString());
    assertEquals(List.of("upper"), summary.get("functions"), summary.toString());
    assertFalse(summary.toString().contains("secret"), summary.toString());
  }

  /**
   * {@code SET key=value} carries its value unquoted: Spark's lexer reads it as an identifier, so redacting
   * literals alone would leave a secret setting's value in the audit record, even with literals kept.
   */
  @Test
  void secretSettingsValue_setInSql_isNeverRecorded() {
    io.sparkgate.inspect.Inspector inspector = new io.sparkgate.inspect.Inspector();
    for (boolean literals : new boolean[] {false, true}) {
      for (String sql :
          List.of(
              "SET spark.hadoop.fs.s3a.secret.key=AKIAsecretvalue",
              "SET spark.hadoop.fs.s3a.secret.key = 'AKIAsecretvalue'")) {
        Facts facts =
            inspector.inspect(
                "ExecutePlan",
                io.sparkgate.proto.spark.ExecutePlanRequest.newBuilder()
                    .setSessionId("s")
                    .setPlan(
                        io.sparkgate.proto.spark.Plan.newBuilder()
                            .setCommand(
                                io.sparkgate.proto.spark.Command.newBuilder()
                                    .setSqlCommand(
                                        io.sparkgate.proto.spark.SqlCommand.newBuilder()
                                            .setSql(sql))))
                    .build()
                    .toByteArray(),
                io.sparkgate.inspect.SessionView.DEFAULT);

        Map<String, Object> summary = new PlanSummary(literals, SECRETS).add(facts).toMap();

        assertFalse(summary.toString().contains("AKIA"), sql + " -> " + summary);
        assertEquals(
            List.of("spark.hadoop.fs.s3a.secret.key"),
            summary.get("config_keys"),
            summary.toString());
      }
    }
  }
}
