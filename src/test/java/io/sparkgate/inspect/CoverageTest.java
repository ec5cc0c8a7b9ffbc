package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Message;
import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.Command;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Expression;
import io.sparkgate.proto.spark.PipelineCommand;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Project;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.testing.TestFacts;
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
    check(
        PipelineCommand.getDescriptor().getRealOneofs().get(0),
        problems,
        f ->
            plan(
                Plan.newBuilder()
                    .setCommand(
                        Command.newBuilder()
                            .setPipelineCommand(set(PipelineCommand.newBuilder(), f)))));
    check(
        PipelineCommand.DefineOutput.getDescriptor().getRealOneofs().get(0),
        problems,
        f ->
            plan(
                Plan.newBuilder()
                    .setCommand(
                        Command.newBuilder()
                            .setPipelineCommand(
                                PipelineCommand.newBuilder()
                                    .setDefineOutput(
                                        set(PipelineCommand.DefineOutput.newBuilder(), f))))));
    check(
        PipelineCommand.DefineFlow.getDescriptor().getRealOneofs().get(0),
        problems,
        f ->
            plan(
                Plan.newBuilder()
                    .setCommand(
                        Command.newBuilder()
                            .setPipelineCommand(
                                PipelineCommand.newBuilder()
                                    .setDefineFlow(
                                        set(PipelineCommand.DefineFlow.newBuilder(), f))))));
    check(
        ExecutePlanRequest.RequestOption.getDescriptor().getRealOneofs().get(0),
        problems,
        f ->
            new Request(
                "ExecutePlan",
                ExecutePlanRequest.newBuilder()
                    .setSessionId("s")
                    .setPlan(
                        Plan.newBuilder()
                            .setRoot(
                                Relation.newBuilder()
                                    .setRange(
                                        io.sparkgate.proto.spark.Range.newBuilder().setEnd(1))))
                    .addRequestOptions(set(ExecutePlanRequest.RequestOption.newBuilder(), f))
                    .build()
                    .toByteArray()));
    assertTrue(problems.isEmpty(), String.join("\n", problems));
  }

  @Test
  void the_reviewed_lists_name_no_case_that_does_not_exist() {
    List<Descriptor> types =
        List.of(
            Relation.getDescriptor(),
            Command.getDescriptor(),
            Expression.getDescriptor(),
            AnalyzePlanRequest.getDescriptor(),
            io.sparkgate.proto.spark.ConfigRequest.Operation.getDescriptor(),
            io.sparkgate.proto.spark.MlCommand.getDescriptor(),
            PipelineCommand.getDescriptor(),
            PipelineCommand.DefineOutput.getDescriptor(),
            PipelineCommand.DefineFlow.getDescriptor(),
            ExecutePlanRequest.RequestOption.getDescriptor());
    for (String key : Coverage.REVIEWED_ONEOFS) {
      if (key.startsWith("spark.connect.Catalog")) continue;
      assertTrue(oneof(types, key) != null, "no type listed here has the reviewed oneof " + key);
    }
    for (String key : Coverage.STRUCTURAL) {
      String oneofName = key.substring(0, key.lastIndexOf('.'));
      String field = key.substring(key.lastIndexOf('.') + 1);
      OneofDescriptor oneof = oneof(types, oneofName);
      assertTrue(
          oneof != null && oneof.getFields().stream().anyMatch(f -> f.getName().equals(field)),
          "stale entry " + key);
    }
  }

  private static OneofDescriptor oneof(List<Descriptor> types, String fullName) {
    for (Descriptor t : types) {
      for (OneofDescriptor o : t.getRealOneofs()) if (o.getFullName().equals(fullName)) return o;
    }
    return null;
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

  /** Every real oneof of every type a request can hold, by full name, with its type. */
  private static java.util.Map<String, OneofDescriptor> reachableOneofs() {
    java.util.Map<String, OneofDescriptor> out = new java.util.TreeMap<>();
    for (Descriptor t : reachableTypes().keySet())
      for (OneofDescriptor o : t.getRealOneofs()) out.put(o.getFullName(), o);
    return out;
  }

  /**
   * Every message type reachable from a request, with a way there: the method and the fields from its
   * request (the first found, breadth first; map fields are not followed).
   */
  private static java.util.Map<Descriptor, Route> reachableTypes() {
    java.util.Map<Descriptor, Route> routes = new java.util.LinkedHashMap<>();
    java.util.ArrayDeque<Descriptor> todo = new java.util.ArrayDeque<>();
    new java.util.TreeMap<>(Requests.byMethod())
        .forEach(
            (method, prototype) -> {
              Descriptor t = prototype.getDescriptorForType();
              if (routes.putIfAbsent(t, new Route(method, List.of())) == null) todo.add(t);
            });
    while (!todo.isEmpty()) {
      Descriptor t = todo.poll();
      for (FieldDescriptor f : t.getFields()) {
        if (f.getJavaType() != FieldDescriptor.JavaType.MESSAGE || f.isMapField()) continue;
        Descriptor child = f.getMessageType();
        if (routes.containsKey(child)) continue;
        List<FieldDescriptor> path = new ArrayList<>(routes.get(t).fields());
        path.add(f);
        routes.put(child, new Route(routes.get(t).method(), path));
        todo.add(child);
      }
    }
    return routes;
  }

  private record Route(String method, List<FieldDescriptor> fields) {}

  /** The route's request with an empty message at its end (every message on the way holds only the next). */
  private static byte[] emptyAt(Route route, Descriptor requestType) {
    return build(requestType, route.fields(), 0).toByteArray();
  }

  private static Message build(Descriptor type, List<FieldDescriptor> path, int i) {
    com.google.protobuf.DynamicMessage.Builder b =
        com.google.protobuf.DynamicMessage.newBuilder(type);
    if (i < path.size()) {
      FieldDescriptor f = path.get(i);
      Message child = build(f.getMessageType(), path, i + 1);
      if (f.isRepeated()) b.addRepeatedField(f, child);
      else b.setField(f, child);
    }
    return b.build();
  }

  @Test
  void every_oneof_a_request_can_hold_is_reviewed_as_required_or_optional() {
    java.util.Map<String, OneofDescriptor> all = reachableOneofs();
    List<String> problems = new ArrayList<>();
    for (String name : all.keySet()) {
      boolean required = Coverage.REQUIRED_ONEOFS.contains(name);
      boolean optional = Coverage.OPTIONAL_ONEOFS.contains(name);
      if (required == optional)
        problems.add(
            name
                + (required
                    ? " is both required and optional"
                    : " is new: add it to Coverage.REQUIRED_ONEOFS or OPTIONAL_ONEOFS"));
    }
    for (String name : Coverage.REQUIRED_ONEOFS)
      if (!all.containsKey(name)) problems.add("stale REQUIRED_ONEOFS entry " + name);
    for (String name : Coverage.OPTIONAL_ONEOFS)
      if (!all.containsKey(name)) problems.add("stale OPTIONAL_ONEOFS entry " + name);
    assertTrue(problems.isEmpty(), String.join("\n", problems));
  }

  /**
   * A message whose required oneof has no case is UNCLASSIFIED no_case, read from the encoding or the parse
   * alike; an optional one unset is not.
   */
  @Test
  void an_unset_required_oneof_is_unclassified_and_an_optional_one_is_not() {
    java.util.Map<Descriptor, Route> routes = reachableTypes();
    List<String> problems = new ArrayList<>();
    for (OneofDescriptor oneof : reachableOneofs().values()) {
      Descriptor type = oneof.getContainingType();
      Route route = routes.get(type);
      Descriptor requestType = Requests.prototype(route.method()).getDescriptorForType();
      byte[] bytes = emptyAt(route, requestType);
      for (boolean fromEncoding : List.of(true, false)) {
        Facts facts =
            Readings.read(
                inspector, route.method(), bytes, SessionView.DEFAULT, null, fromEncoding);
        boolean noCase =
            facts.any(
                Fact.Kind.UNCLASSIFIED,
                x -> x.subkind().equals("no_case") && oneof.getFullName().equals(x.get("oneof")));
        if (noCase != Coverage.REQUIRED_ONEOFS.contains(oneof.getFullName()))
          problems.add(
              oneof.getFullName()
                  + (fromEncoding ? " (encoding)" : " (parse)")
                  + (noCase ? ": no_case for an optional oneof" : ": no no_case")
                  + " "
                  + facts);
        if (facts.any(Fact.Kind.UNCLASSIFIED, x -> x.subkind().equals("inspector_error")))
          problems.add(oneof.getFullName() + ": " + facts);
      }
    }
    assertTrue(problems.isEmpty(), String.join("\n", problems));
  }

  @Test
  void a_request_without_what_the_server_would_run_is_unclassified() {
    Facts noPlan =
        inspector.inspect(
            "ExecutePlan",
            ExecutePlanRequest.newBuilder().setSessionId("s").build().toByteArray(),
            SessionView.DEFAULT);
    assertTrue(
        noPlan.any(
            Fact.Kind.UNCLASSIFIED,
            x ->
                x.subkind().equals("missing_field")
                    && "spark.connect.ExecutePlanRequest.plan".equals(x.get("field"))),
        noPlan.toString());
    Facts noOperation =
        inspector.inspect(
            "Config",
            io.sparkgate.proto.spark.ConfigRequest.newBuilder()
                .setSessionId("s")
                .build()
                .toByteArray(),
            SessionView.DEFAULT);
    assertTrue(
        TestFacts.has(noOperation, Fact.Kind.UNCLASSIFIED, "missing_field"),
        noOperation.toString());
    Facts get =
        inspector.inspect(
            "Config",
            io.sparkgate.proto.spark.ConfigRequest.newBuilder()
                .setSessionId("s")
                .setOperation(
                    io.sparkgate.proto.spark.ConfigRequest.Operation.newBuilder()
                        .setGetAll(
                            io.sparkgate.proto.spark.ConfigRequest.GetAll.getDefaultInstance()))
                .build()
                .toByteArray(),
            SessionView.DEFAULT);
    assertFalse(get.has(Fact.Kind.UNCLASSIFIED), "get_all with no prefix is ordinary: " + get);
  }

  @Test
  void detector_cases_yield_their_facts() {
    // Cases whose empty message already says what they are.
    assertTrue(
        TestFacts.has(
            factsOf(
                Command.newBuilder()
                    .setExecuteExternalCommand(
                        io.sparkgate.proto.spark.ExecuteExternalCommand.newBuilder()
                            .setRunner("jdbc")
                            .setCommand("DROP TABLE x"))),
            Fact.Kind.USER_CODE,
            "execute_external_command"));
    assertTrue(
        TestFacts.has(
            factsOf(
                Command.newBuilder()
                    .setCreateResourceProfileCommand(
                        io.sparkgate.proto.spark.CreateResourceProfileCommand
                            .getDefaultInstance())),
            Fact.Kind.USER_CODE,
            "create_resource_profile"));
    assertTrue(
        TestFacts.has(
            factsOf(
                Command.newBuilder()
                    .setPipelineCommand(
                        io.sparkgate.proto.spark.PipelineCommand.newBuilder()
                            .setDefineSqlGraphElements(
                                io.sparkgate.proto.spark.PipelineCommand.DefineSqlGraphElements
                                    .newBuilder()
                                    .setSqlText("x")))),
            Fact.Kind.USER_CODE,
            "pipeline_command"));
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
    assertTrue(TestFacts.has(ext, Fact.Kind.UNCLASSIFIED, "unknown_extension"));
  }

  private Facts factsOf(Command.Builder command) {
    Request r = plan(Plan.newBuilder().setCommand(command));
    return inspector.inspect(r.method(), r.bytes(), SessionView.DEFAULT);
  }
}
