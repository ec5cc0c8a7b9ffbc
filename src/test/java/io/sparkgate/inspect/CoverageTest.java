package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Message;
import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.Command;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Expression;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Project;
import io.sparkgate.proto.spark.Relation;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every oneof case of the newest protos is either walked (structural or detected) or UNCLASSIFIED. */
final class CoverageTest {
  private final Inspector inspector = new Inspector();

  @Test
  void every_case_is_reviewed_and_behaves_as_declared() {
    List<String> problems = new ArrayList<>();
    check(
        Relation.getDescriptor().findFieldByName("common").getContainingType().getOneofs().get(0),
        problems,
        f -> plan(Plan.newBuilder().setRoot(set(Relation.newBuilder(), f))));
    check(
        Command.getDescriptor().getOneofs().get(0),
        problems,
        f -> plan(Plan.newBuilder().setCommand(set(Command.newBuilder(), f))));
    check(
        Expression.getDescriptor().getOneofs().get(0),
        problems,
        f ->
            plan(
                Plan.newBuilder()
                    .setRoot(
                        Relation.newBuilder()
                            .setProject(
                                Project.newBuilder()
                                    .addExpressions(set(Expression.newBuilder(), f))))));
    check(
        AnalyzePlanRequest.getDescriptor().getOneofs().get(0),
        problems,
        f ->
            new Request(
                "AnalyzePlan",
                set(AnalyzePlanRequest.newBuilder().setSessionId("s"), f)
                    .buildPartial()
                    .toByteArray()));
    assertTrue(problems.isEmpty(), String.join("\n", problems));
  }

  @Test
  void the_reviewed_lists_name_no_case_that_does_not_exist() {
    for (String key : Coverage.STRUCTURAL) {
      if (key.startsWith("spark.connect.ConfigRequest")) continue;
      String oneofName = key.substring(0, key.lastIndexOf('.'));
      String field = key.substring(key.lastIndexOf('.') + 1);
      Message proto =
          switch (oneofName) {
            case "spark.connect.Relation.rel_type" -> Relation.getDefaultInstance();
            case "spark.connect.Command.command_type" -> Command.getDefaultInstance();
            case "spark.connect.Expression.expr_type" -> Expression.getDefaultInstance();
            default -> AnalyzePlanRequest.getDefaultInstance();
          };
      assertTrue(proto.getDescriptorForType().findFieldByName(field) != null, "stale entry " + key);
    }
  }

  private record Request(String method, byte[] bytes) {}

  private static Request plan(Plan.Builder plan) {
    return new Request(
        "ExecutePlan",
        ExecutePlanRequest.newBuilder().setSessionId("s").setPlan(plan).build().toByteArray());
  }

  @SuppressWarnings("unchecked")
  private static <B extends Message.Builder> B set(B builder, FieldDescriptor f) {
    builder.setField(f, builder.newBuilderForField(f).buildPartial());
    return builder;
  }

  private void check(
      OneofDescriptor oneof,
      List<String> problems,
      java.util.function.Function<FieldDescriptor, Request> build) {
    assertFalse(oneof.getFields().isEmpty());
    for (FieldDescriptor f : oneof.getFields()) {
      Request r = build.apply(f);
      Facts facts = inspector.inspect(r.method(), r.bytes(), SessionView.DEFAULT);
      boolean unknownCase =
          facts.any(
              Fact.Kind.UNCLASSIFIED,
              x -> x.subkind().equals("unknown_case") && f.getName().equals(x.get("case")));
      boolean handled = Coverage.isHandled(oneof.getFullName(), f.getName());
      if (handled == unknownCase) {
        problems.add(
            oneof.getFullName()
                + "."
                + f.getName()
                + (handled
                    ? " is handled but reported unknown"
                    : " is not reviewed: add it to Coverage (with a detector and a test) or to DELIBERATELY_UNCLASSIFIED"));
      }
      if (!handled
          && !Coverage.DELIBERATELY_UNCLASSIFIED.contains(
              oneof.getFullName() + "." + f.getName())) {
        problems.add(oneof.getFullName() + "." + f.getName() + " is new: review it");
      }
      assertFalse(
          facts.any(Fact.Kind.UNCLASSIFIED, x -> x.subkind().equals("inspector_error")),
          facts.toString());
    }
  }

  @Test
  void detector_cases_yield_their_facts() {
    // Cases whose empty message already says what they are.
    assertTrue(
        factsOf(
                Command.newBuilder()
                    .setExecuteExternalCommand(
                        io.sparkgate.proto.spark.ExecuteExternalCommand.newBuilder()
                            .setRunner("jdbc")
                            .setCommand("DROP TABLE x")))
            .has(Fact.Kind.USER_CODE, "execute_external_command"));
    assertTrue(
        factsOf(
                Command.newBuilder()
                    .setCreateResourceProfileCommand(
                        io.sparkgate.proto.spark.CreateResourceProfileCommand.getDefaultInstance()))
            .has(Fact.Kind.USER_CODE, "create_resource_profile"));
    assertTrue(
        factsOf(
                Command.newBuilder()
                    .setPipelineCommand(
                        io.sparkgate.proto.spark.PipelineCommand.newBuilder()
                            .setDefineSqlGraphElements(
                                io.sparkgate.proto.spark.PipelineCommand.DefineSqlGraphElements
                                    .newBuilder()
                                    .setSqlText("x"))))
            .has(Fact.Kind.USER_CODE, "pipeline_command"));
    assertTrue(
        factsOf(
                Command.newBuilder()
                    .setMlCommand(
                        io.sparkgate.proto.spark.MlCommand.newBuilder()
                            .setRead(
                                io.sparkgate.proto.spark.MlCommand.Read.newBuilder()
                                    .setPath("/tmp/model")
                                    .setOperator(
                                        io.sparkgate.proto.spark.MlOperator.newBuilder()
                                            .setName("org.evil.Model")))))
            .any(Fact.Kind.USER_CODE, f -> "org.evil.Model".equals(f.get("class_name"))));
    Facts ext =
        factsOf(
            Command.newBuilder()
                .setExtension(
                    com.google.protobuf.Any.newBuilder().setTypeUrl("type.googleapis.com/x.Y")));
    assertEquals("type.googleapis.com/x.Y", ext.ofKind(Fact.Kind.EXTENSION).get(0).get("type_url"));
    assertTrue(ext.has(Fact.Kind.UNCLASSIFIED, "unknown_extension"));
  }

  private Facts factsOf(Command.Builder command) {
    Request r = plan(Plan.newBuilder().setCommand(command));
    return inspector.inspect(r.method(), r.bytes(), SessionView.DEFAULT);
  }
}
