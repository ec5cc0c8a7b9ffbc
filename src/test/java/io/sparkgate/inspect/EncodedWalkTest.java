package io.sparkgate.inspect;

import static io.sparkgate.testing.WireBytes.concat;
import static io.sparkgate.testing.WireBytes.field;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Message;
import io.sparkgate.proto.spark.Base;
import io.sparkgate.proto.spark.CommonInlineUserDefinedFunction;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Expression;
import io.sparkgate.proto.spark.Limit;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Project;
import io.sparkgate.proto.spark.PythonUDF;
import io.sparkgate.proto.spark.Range;
import io.sparkgate.proto.spark.Read;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.RelationCommon;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.StatApproxQuantile;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.TestFacts;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The walk from the encoding (PlanWalker.walkEncoded) reports exactly what the walk of the parsed request
 * reports, on what encoders write and on everything else, where it must give way to protobuf's parse.
 */
final class EncodedWalkTest {
  private static final SessionView SESSION =
      SessionView.of("spark_catalog", "default", Set.of("cat"));
  private final Inspector inspector = new Inspector();

  @Test
  void random_requests_and_their_corruptions_give_the_same_facts_either_way() {
    Random random = new Random(7);
    List<MethodDescriptor> methods =
        Base.getDescriptor().findServiceByName("SparkConnectService").getMethods();
    for (int i = 0; i < 400; i++) {
      MethodDescriptor method =
          random.nextInt(3) == 0
              ? methods.get(random.nextInt(methods.size()))
              : Base.getDescriptor()
                  .findServiceByName("SparkConnectService")
                  .findMethodByName(random.nextBoolean() ? "ExecutePlan" : "AnalyzePlan");
      Message prototype = Requests.prototype(method.getName());
      byte[] bytes = new RandomMessages(random).of(prototype).toByteArray();
      assertWalkedFromEncoding(prototype, bytes);
      assertSameFacts(method.getName(), bytes);
      for (int k = 0; k < 4; k++) assertSameFacts(method.getName(), corrupt(bytes, random));
    }
  }

  @Test
  void request_head_strings_are_read_from_the_encoding_as_protobuf_reads_them() {
    // Fields in order (read from the encoding): an empty session_id, which has no presence (an
    // encoder leaves it out; a client may still send it), an empty user_name, and an empty
    // client_type, which has presence.
    byte[] canonical =
        concat(
            field(ExecutePlanRequest.SESSION_ID_FIELD_NUMBER, new byte[0]),
            field(
                ExecutePlanRequest.USER_CONTEXT_FIELD_NUMBER,
                concat(
                    field(
                        UserContext.USER_ID_FIELD_NUMBER, "alice".getBytes(StandardCharsets.UTF_8)),
                    field(UserContext.USER_NAME_FIELD_NUMBER, new byte[0]))),
            ExecutePlanRequest.newBuilder().setClientType("").build().toByteArray());
    assertWalkedFromEncoding(ExecutePlanRequest.getDefaultInstance(), canonical);
    Fact head = assertSameFacts("ExecutePlan", canonical).ofKind(Fact.Kind.REQUEST).get(0);
    assertNull(head.get("session_id"));
    assertEquals("alice", head.get("user_id"));
    assertNull(head.get("user_name"));
    assertEquals("", head.get("client_type"));
    assertNull(head.get("operation_id"));

    // Left to protobuf's parse, and reported the same: a user_context sent twice (merged, the last
    // user_id winning), an empty one, and one whose user_id is not UTF-8.
    byte[] alice =
        field(
            ExecutePlanRequest.USER_CONTEXT_FIELD_NUMBER,
            UserContext.newBuilder().setUserId("alice").setUserName("Alice").build().toByteArray());
    byte[] bob =
        field(
            ExecutePlanRequest.USER_CONTEXT_FIELD_NUMBER,
            UserContext.newBuilder().setUserId("bob").build().toByteArray());
    Fact merged =
        assertSameFacts("ExecutePlan", concat(alice, bob)).ofKind(Fact.Kind.REQUEST).get(0);
    assertEquals("bob", merged.get("user_id"));
    assertEquals("Alice", merged.get("user_name"));
    byte[] empty = field(ExecutePlanRequest.USER_CONTEXT_FIELD_NUMBER, new byte[0]);
    assertNull(
        assertSameFacts("ExecutePlan", empty).ofKind(Fact.Kind.REQUEST).get(0).get("user_id"));
    assertSameFacts(
        "ExecutePlan",
        field(
            ExecutePlanRequest.USER_CONTEXT_FIELD_NUMBER,
            field(UserContext.USER_ID_FIELD_NUMBER, new byte[] {(byte) 0xC3})));
  }

  @Test
  void a_singular_message_field_twice_is_merged_as_protobuf_merges_it() {
    // A Limit whose input comes twice: protobuf merges the two into one NamedTable, with both
    // options.
    byte[] first =
        Limit.newBuilder()
            .setInput(
                Relation.newBuilder()
                    .setRead(
                        Read.newBuilder()
                            .setNamedTable(
                                Read.NamedTable.newBuilder()
                                    .setUnparsedIdentifier("a")
                                    .putOptions("versionAsOf", "1"))))
            .build()
            .toByteArray();
    byte[] second =
        Limit.newBuilder()
            .setInput(
                Relation.newBuilder()
                    .setRead(
                        Read.newBuilder()
                            .setNamedTable(
                                Read.NamedTable.newBuilder().setUnparsedIdentifier("b"))))
            .build()
            .toByteArray();
    Facts f =
        assertSameFacts(
            "ExecutePlan", request(field(Relation.LIMIT_FIELD_NUMBER, concat(first, second))));
    assertEquals(1, f.ofKind(Fact.Kind.TABLE_READ).size());
    assertEquals("b", f.ofKind(Fact.Kind.TABLE_READ).get(0).get("name"));
    assertEquals(1, f.ofKind(Fact.Kind.TIME_TRAVEL).size());
  }

  @Test
  void two_cases_of_a_oneof_leave_the_last_as_protobuf_does() {
    byte[] range =
        Relation.newBuilder().setRange(Range.newBuilder().setEnd(1)).build().toByteArray();
    byte[] read =
        Relation.newBuilder()
            .setRead(
                Read.newBuilder()
                    .setNamedTable(Read.NamedTable.newBuilder().setUnparsedIdentifier("t")))
            .build()
            .toByteArray();
    assertEquals(1, assertSameFacts("ExecutePlan", request(concat(read, range))).size());
    assertEquals(
        1,
        assertSameFacts("ExecutePlan", request(concat(range, read)))
            .ofKind(Fact.Kind.TABLE_READ)
            .size());
  }

  @Test
  void fields_out_of_order_unknown_fields_and_bad_utf8_are_reported_as_when_parsed() {
    byte[] range =
        Relation.newBuilder().setRange(Range.newBuilder().setEnd(1)).build().toByteArray();
    byte[] common =
        Relation.newBuilder()
            .setCommon(RelationCommon.newBuilder().setPlanId(3))
            .build()
            .toByteArray();
    assertSameFacts("ExecutePlan", request(concat(range, common)));
    Facts unknown =
        assertSameFacts("ExecutePlan", request(concat(range, field(77, new byte[] {1}))));
    assertEquals("plan.root", unknown.ofKind(Fact.Kind.UNCLASSIFIED).get(0).get("where"));
    byte[] badUtf8 =
        Relation.newBuilder()
            .setCommon(RelationCommon.newBuilder().setSourceInfo("\u00e9"))
            .build()
            .toByteArray();
    badUtf8[badUtf8.length - 1] = (byte) 0xff;
    assertTrue(
        TestFacts.has(
            assertSameFacts("ExecutePlan", request(badUtf8)),
            Fact.Kind.UNCLASSIFIED,
            "unparseable_request"));
  }

  @Test
  void packed_and_unpacked_repeated_scalars_are_both_read() {
    StatApproxQuantile q =
        StatApproxQuantile.newBuilder().addProbabilities(0.5).addProbabilities(0.9).build();
    byte[] packed = q.toByteArray();
    // The same values unpacked: field 3, wire type 1 (64-bit), once per value.
    byte[] unpacked =
        concat(
            new byte[] {0x19},
            Arrays.copyOfRange(packed, 2, 10),
            new byte[] {0x19},
            Arrays.copyOfRange(packed, 10, 18));
    byte[] ragged =
        field(StatApproxQuantile.PROBABILITIES_FIELD_NUMBER, Arrays.copyOfRange(packed, 2, 17));
    for (byte[] body :
        List.of(packed, unpacked, Arrays.copyOf(packed, packed.length - 1), ragged)) {
      assertSameFacts("ExecutePlan", request(field(Relation.APPROX_QUANTILE_FIELD_NUMBER, body)));
    }
  }

  @Test
  void plans_at_the_depth_bound_are_reported_as_when_parsed() {
    Inspector shallow = new Inspector(new InspectorConfig(32, 1 << 20, 1 << 20, 10_000, Set.of()));
    // Leaves two levels below a relation (a table read) and one (a range), so that either parity of
    // depth is hit.
    Relation read =
        Relation.newBuilder()
            .setRead(
                Read.newBuilder()
                    .setNamedTable(Read.NamedTable.newBuilder().setUnparsedIdentifier("t")))
            .build();
    Relation range = Relation.newBuilder().setRange(Range.newBuilder().setEnd(1)).build();
    for (Relation leaf : List.of(read, range)) {
      Relation r = leaf;
      for (int limits = 1; limits < 20; limits++) {
        r = Relation.newBuilder().setLimit(Limit.newBuilder().setInput(r).setLimit(1)).build();
        byte[] bytes = request(r.toByteArray());
        assertEquals(
            Readings.read(shallow, "ExecutePlan", bytes, SESSION, null, false).all(),
            Readings.read(shallow, "ExecutePlan", bytes, SESSION, null, true).all(),
            "limits " + limits);
      }
    }
  }

  @Test
  void extensions_and_nested_udfs_past_the_parse_budget_are_reported_as_when_parsed() {
    Relation ext =
        Relation.newBuilder()
            .setExtension(Any.newBuilder().setTypeUrl("type.googleapis.com/x.Y"))
            .build();
    assertTrue(assertSameFacts("ExecutePlan", request(ext.toByteArray())).has(Fact.Kind.EXTENSION));
    // Each UDF asks for its enclosing function, which holds all the functions inside it.
    Expression e =
        Expression.newBuilder().setLiteral(Expression.Literal.newBuilder().setInteger(1)).build();
    for (int i = 0; i < 40; i++) {
      e =
          Expression.newBuilder()
              .setCommonInlineUserDefinedFunction(
                  CommonInlineUserDefinedFunction.newBuilder()
                      .setFunctionName("f" + i)
                      .addArguments(e)
                      .setPythonUdf(
                          PythonUDF.newBuilder().setCommand(ByteString.copyFromUtf8("x"))))
              .build();
    }
    Relation udfs =
        Relation.newBuilder().setProject(Project.newBuilder().addExpressions(e)).build();
    assertEquals(
        40,
        assertSameFacts("ExecutePlan", request(udfs.toByteArray()))
            .ofKind(Fact.Kind.USER_CODE)
            .size());
  }

  @Test
  void statements_and_function_names_are_read_from_the_encoding_as_protobuf_reads_them() {
    String statement = "SELECT upper('\u00fcber') FROM db.t";
    Relation sql = Relation.newBuilder().setSql(SQL.newBuilder().setQuery(statement)).build();
    Relation function =
        Relation.newBuilder()
            .setProject(
                Project.newBuilder()
                    .addExpressions(
                        Expression.newBuilder()
                            .setUnresolvedFunction(
                                Expression.UnresolvedFunction.newBuilder()
                                    .setFunctionName("Reflect"))))
            .build();
    for (Relation r : List.of(sql, function)) {
      assertEquals(0, walkEncoded(request(r.toByteArray())).parses, r.toString());
    }
    Facts read = assertSameFacts("ExecutePlan", request(sql.toByteArray()));
    assertEquals(statement, read.ofKind(Fact.Kind.SQL).get(0).get("sql"));
    assertEquals(
        "reflect",
        assertSameFacts("ExecutePlan", request(function.toByteArray()))
            .ofKind(Fact.Kind.FUNCTION_CALL)
            .get(0)
            .get("name"));

    // An empty statement, sent although an encoder leaves it out (no presence: no statement), and a
    // SQL relation with parameters, a map of messages that the walk takes from the parsed message.
    byte[] empty = field(Relation.SQL_FIELD_NUMBER, field(SQL.QUERY_FIELD_NUMBER, new byte[0]));
    assertTrue(assertSameFacts("ExecutePlan", request(empty)).ofKind(Fact.Kind.SQL).isEmpty());
    Relation withArgs =
        Relation.newBuilder()
            .setSql(
                SQL.newBuilder()
                    .setQuery("SELECT :x")
                    .putNamedArguments(
                        "x",
                        Expression.newBuilder()
                            .setLiteral(Expression.Literal.newBuilder().setInteger(1))
                            .build()))
            .build();
    assertEquals(
        "SELECT :x",
        assertSameFacts("ExecutePlan", request(withArgs.toByteArray()))
            .ofKind(Fact.Kind.SQL)
            .get(0)
            .get("sql"));
  }

  private static PlanWalker walkEncoded(byte[] request) {
    InspectorConfig config = InspectorConfig.DEFAULTS;
    FactSink sink = new FactSink(config.maxFacts());
    PlanWalker walker =
        new PlanWalker(config, new Detectors(config, new SqlInspector(config), sink), sink);
    walker.walkEncoded(request, Shape.of(ExecutePlanRequest.getDefaultInstance()), SESSION);
    return walker;
  }

  private Facts assertSameFacts(String method, byte[] bytes) {
    Facts parsed = Readings.read(inspector, method, bytes, SESSION, null, false);
    Facts encoded = Readings.read(inspector, method, bytes, SESSION, null, true);
    assertEquals(parsed.all(), encoded.all());
    return encoded;
  }

  /** What an encoder writes is walked from the encoding, not handed to the parse. */
  private static void assertWalkedFromEncoding(Message prototype, byte[] bytes) {
    InspectorConfig config = InspectorConfig.DEFAULTS;
    FactSink sink = new FactSink(config.maxFacts());
    SqlInspector sql = new SqlInspector(config);
    assertDoesNotThrow(
        () -> {
          HeadLayout head = HeadLayout.of(prototype.getDescriptorForType());
          assertNotNull(head, "every request type's head is read from its encoding");
          SessionView session =
              head.emit(
                  prototype.getDescriptorForType().getName(),
                  bytes,
                  sink,
                  SessionViews.fixed(SESSION));
          new PlanWalker(config, new Detectors(config, sql, sink), sink)
              .walkEncoded(bytes, Shape.of(prototype), session);
        },
        () -> prototype.getDescriptorForType().getName() + " " + Arrays.toString(bytes));
  }

  /** An ExecutePlanRequest whose plan's root relation is encoded as given. */
  private static byte[] request(byte[] root) {
    byte[] head = ExecutePlanRequest.newBuilder().setSessionId("s").build().toByteArray();
    return concat(
        head, field(ExecutePlanRequest.PLAN_FIELD_NUMBER, field(Plan.ROOT_FIELD_NUMBER, root)));
  }

  /** A bit flipped, a byte replaced, a wire type changed, a cut, the request (or a prefix) repeated. */
  static byte[] corrupt(byte[] bytes, Random random) {
    if (bytes.length == 0) return new byte[] {8, 1};
    byte[] c = bytes.clone();
    int at = random.nextInt(c.length);
    switch (random.nextInt(6)) {
      case 0 -> c[at] ^= (byte) (1 << random.nextInt(8));
      case 1 -> c[at] = (byte) random.nextInt(256);
      case 2 -> c[at] = (byte) (c[at] & ~7 | random.nextInt(8));
      case 3 -> c = Arrays.copyOf(c, at);
      case 4 -> c = concat(c, c);
      default -> c = concat(c, Arrays.copyOf(c, at + 1));
    }
    return c;
  }

  /** Random messages of any type: every oneof often set, other fields less often the deeper they are. */
  static final class RandomMessages {
    private static final String[] STRINGS = {
      "",
      "t",
      "db.t",
      "cat.db.t",
      "`a.b`.c",
      "/etc/passwd",
      "file:/tmp/x",
      "../up",
      "s3://b/k",
      "SELECT * FROM t",
      "SELECT a FROM db.t VERSION AS OF 3",
      "reflect('a', 'b')",
      "SET spark.x=1",
      "versionAsOf",
      "snapshot-id",
      "path",
      "checkpointLocation",
      "true",
      "1",
      "\u00fcber"
    };
    private final Random random;
    private int budget = 300;

    RandomMessages(Random random) {
      this.random = random;
    }

    Message of(Message prototype) {
      Message.Builder b = prototype.newBuilderForType();
      fill(b, 0);
      return b.buildPartial();
    }

    private void fill(Message.Builder b, int depth) {
      if (--budget < 0 || depth > 24) return;
      double p = depth < 8 ? 0.8 : depth < 14 ? 0.5 : 0.2;
      for (OneofDescriptor o : b.getDescriptorForType().getRealOneofs()) {
        if (random.nextDouble() < 0.9) set(b, o.getField(random.nextInt(o.getFieldCount())), depth);
      }
      for (FieldDescriptor f : b.getDescriptorForType().getFields()) {
        if (f.getRealContainingOneof() == null
            && random.nextDouble() < (f.getName().contains("input") ? 0.9 : p)) {
          set(b, f, depth);
        }
      }
    }

    private void set(Message.Builder b, FieldDescriptor f, int depth) {
      if (f.isMapField()) {
        for (int i = random.nextInt(3); i > 0; i--) {
          Message.Builder entry = b.newBuilderForField(f);
          for (FieldDescriptor kv : f.getMessageType().getFields())
            entry.setField(kv, value(entry, kv, depth));
          b.addRepeatedField(f, entry.build());
        }
      } else if (f.isRepeated()) {
        for (int i = random.nextInt(4); i > 0; i--) b.addRepeatedField(f, value(b, f, depth));
      } else {
        b.setField(f, value(b, f, depth));
      }
    }

    private Object value(Message.Builder b, FieldDescriptor f, int depth) {
      return switch (f.getJavaType()) {
        case INT -> random.nextInt(5) == 0 ? random.nextInt() : random.nextInt(300);
        case LONG -> (long) random.nextInt(1000);
        case FLOAT -> random.nextFloat();
        case DOUBLE -> random.nextDouble();
        case BOOLEAN -> random.nextBoolean();
        case STRING -> STRINGS[random.nextInt(STRINGS.length)];
        case BYTE_STRING -> ByteString.copyFrom(new byte[random.nextInt(4)]);
        case ENUM ->
            f.getEnumType().getValues().get(random.nextInt(f.getEnumType().getValues().size()));
        case MESSAGE -> {
          Message.Builder child = b.newBuilderForField(f);
          if (child.getDescriptorForType().equals(Any.getDescriptor())) {
            child.setField(
                Any.getDescriptor().findFieldByName("type_url"), "type.googleapis.com/x.Y");
          } else {
            fill(child, depth + 1);
          }
          yield child.buildPartial();
        }
      };
    }
  }
}
