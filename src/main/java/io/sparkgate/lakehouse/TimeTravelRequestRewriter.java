package io.sparkgate.lakehouse;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.SessionView;
import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The policy's {@code rewrite} effect for Iceberg SQL time travel on a mixed Hudi + Iceberg backend: finds every
 * SQL text of a request the inspector reads ({@code SQL.query} anywhere in the plan: {@code plan.root.sql},
 * {@code with_relations} roots and references, 4.0's {@code sql_command.input}; and 3.5's
 * {@code SqlCommand.sql}), rewrites the time travel on Iceberg tables in each with
 * {@link IcebergTimeTravelRewriter}, and returns the re-serialized request. Everything else in the request,
 * the stamped user context included, is unchanged.
 *
 * <p>Fail closed: Iceberg time travel it cannot rewrite, or finds somewhere it cannot write back (an
 * expression string, a nested {@code EXECUTE IMMEDIATE} text, a method other than ExecutePlan/AnalyzePlan),
 * is a {@link RefusedException}, as is a request the inspector could not fully read. Thread-safe.
 */
public final class TimeTravelRequestRewriter {
  private static final String SQL_TYPE = "spark.connect.SQL";
  private static final String SQL_COMMAND_TYPE = "spark.connect.SqlCommand";

  private final int maxDepth;

  /** {@code maxDepth}: the protobuf nesting accepted when parsing (use the inspector's). */
  public TimeTravelRequestRewriter(int maxDepth) {
    if (maxDepth < 16)
      throw new IllegalArgumentException("maxDepth must be at least 16, got " + maxDepth);
    this.maxDepth = maxDepth;
  }

  /** The request to forward and what was rewritten (empty, with the same array, when nothing was). */
  public record Rewritten(byte[] request, List<Rewrite> rewrites) {
    public Rewritten {
      rewrites = List.copyOf(rewrites);
    }
  }

  /**
   * Rewrites one request message of {@code method} (bare, {@code ExecutePlan}, or full), given the inspect
   * stage's facts of it: they must be this request's, read in this session, or spans will not match. On a
   * backend that is not mixed, or a request without Iceberg SQL time travel, returns {@code request} itself.
   */
  public Rewritten rewrite(
      byte[] request, String method, Facts facts, SessionView session, BackendProfile profile)
      throws RefusedException {
    if (!MixedTableFormats.isMixed(profile)) return new Rewritten(request, List.of());
    for (Fact f : facts.ofKind(Fact.Kind.UNCLASSIFIED)) {
      if (List.of("too_many_facts", "inspector_error", "plan_too_deep", "unparseable_request")
          .contains(f.subkind())) {
        throw new RefusedException(
            "",
            "request not fully inspected (" + f.subkind() + ")",
            "Sparkgate could not read the whole request ("
                + f.subkind()
                + "), so it cannot check it for Iceberg "
                + "SQL time travel, which this server does not support.");
      }
    }
    List<Fact> blocked = MixedTableFormats.blocked(facts, profile);
    if (blocked.isEmpty()) return new Rewritten(request, List.of());

    String zone = session == null ? null : session.timeZone();
    Message parsed = parse(request, method, blocked.get(0), zone);
    Map<String, List<Fact>> byWhere = new LinkedHashMap<>();
    for (Fact f : blocked) byWhere.computeIfAbsent(f.get("where"), k -> new ArrayList<>()).add(f);
    List<Rewrite> rewrites = new ArrayList<>();
    for (var e : byWhere.entrySet()) {
      Fact first = e.getValue().get(0);
      List<Step> path = navigate(parsed, e.getKey());
      Message target = path == null ? null : path.get(path.size() - 1).message;
      String typeName = target == null ? "" : target.getDescriptorForType().getFullName();
      FieldDescriptor text =
          typeName.equals(SQL_TYPE)
              ? field(target, "query")
              : typeName.equals(SQL_COMMAND_TYPE) ? field(target, "sql") : null;
      if (text == null) {
        throw new RefusedException(
            first.get("table"),
            "time travel inside " + describe(e.getKey()),
            TimeTravelRefusals.message(
                first,
                zone,
                "the clause is inside "
                    + describe(e.getKey())
                    + ", which Sparkgate does not rewrite"));
      }
      String sql = (String) target.getField(text);
      IcebergTimeTravelRewriter.Result result =
          IcebergTimeTravelRewriter.rewrite(sql, e.getValue(), session);
      rewrites.addAll(result.rewrites());
      parsed = replace(path, target.toBuilder().setField(text, result.sql()).build());
    }
    return new Rewritten(parsed.toByteArray(), rewrites);
  }

  private Message parse(byte[] request, String method, Fact first, String zone)
      throws RefusedException {
    String name = method.substring(method.lastIndexOf('/') + 1);
    Message prototype =
        switch (name) {
          case "ExecutePlan" -> ExecutePlanRequest.getDefaultInstance();
          case "AnalyzePlan" -> AnalyzePlanRequest.getDefaultInstance();
          default -> null;
        };
    if (prototype == null) {
      throw new RefusedException(
          first.get("table"),
          "time travel in a " + name + " request",
          TimeTravelRefusals.message(
              first,
              zone,
              "it arrived in a " + name + " request, which Sparkgate does not rewrite"));
    }
    try {
      CodedInputStream in = CodedInputStream.newInstance(request);
      in.setRecursionLimit(maxDepth);
      return prototype.getParserForType().parseFrom(in);
    } catch (InvalidProtocolBufferException e) {
      throw new RefusedException(
          "", "unparseable request", "Sparkgate could not parse the request: " + e.getMessage());
    } catch (java.io.IOException e) {
      throw new RefusedException(
          "", "unparseable request", "Sparkgate could not parse the request: " + e);
    }
  }

  private static String describe(String where) {
    if (where.endsWith(".execute_immediate")) return "an EXECUTE IMMEDIATE text";
    return "an expression string or other non-SQL field (" + where + ")";
  }

  /** One message on the way down, and how its parent holds it. */
  private record Step(Message message, FieldDescriptor field, int index) {}

  /**
   * Follows the inspector's {@code where} path ({@code plan.root.with_relations.references[1].sql}) from the
   * request; null when it does not lead to a message (a nested SQL text, a map value).
   */
  private static List<Step> navigate(Message root, String where) {
    List<Step> path = new ArrayList<>();
    path.add(new Step(root, null, -1));
    if (where == null || where.isEmpty()) return path;
    Message current = root;
    for (String segment : where.split("\\.")) {
      String name = segment;
      int index = -1;
      int bracket = segment.indexOf('[');
      if (bracket >= 0 && segment.endsWith("]")) {
        name = segment.substring(0, bracket);
        try {
          index = Integer.parseInt(segment.substring(bracket + 1, segment.length() - 1));
        } catch (NumberFormatException e) {
          return null;
        }
      }
      FieldDescriptor fd = current.getDescriptorForType().findFieldByName(name);
      if (fd == null || fd.getJavaType() != FieldDescriptor.JavaType.MESSAGE || fd.isMapField())
        return null;
      Message next;
      if (fd.isRepeated()) {
        if (index < 0 || index >= current.getRepeatedFieldCount(fd)) return null;
        next = (Message) current.getRepeatedField(fd, index);
      } else {
        if (index >= 0 || !current.hasField(fd)) return null;
        next = (Message) current.getField(fd);
      }
      path.add(new Step(next, fd, index));
      current = next;
    }
    return path;
  }

  /** The root with the last message of {@code path} replaced, rebuilt bottom-up without recursion. */
  private static Message replace(List<Step> path, Message leaf) {
    Message child = leaf;
    for (int i = path.size() - 1; i > 0; i--) {
      Step step = path.get(i);
      Message.Builder parent = path.get(i - 1).message.toBuilder();
      if (step.field.isRepeated()) {
        parent.setRepeatedField(step.field, step.index, child);
      } else {
        parent.setField(step.field, child);
      }
      child = parent.build();
    }
    return child;
  }

  private static FieldDescriptor field(Message m, String name) {
    return m.getDescriptorForType().findFieldByName(name);
  }
}
