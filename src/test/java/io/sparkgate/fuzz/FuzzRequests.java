package io.sparkgate.fuzz;

import static io.sparkgate.testing.WireBytes.concat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Message;
import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.Base;
import io.sparkgate.proto.spark.Command;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Expression;
import io.sparkgate.proto.spark.Filter;
import io.sparkgate.proto.spark.KeyValue;
import io.sparkgate.proto.spark.Limit;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Project;
import io.sparkgate.proto.spark.Read;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.SqlCommand;
import io.sparkgate.proto.spark.SubqueryAlias;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.proto.spark.WithRelations;
import io.sparkgate.proto.spark.WriteOperation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Spark Connect requests made from fuzzer input, for the fuzz tests of the inspector and the policy stage:
 * valid requests built from dictionaries of what matters to a policy (dangerous SQL, config keys, functions,
 * local paths) and from fuzzer strings, nested and then possibly mutated at the byte level, or raw bytes.
 * Decoding must stay stable for the same input, so that the checked-in corpus keeps meaning the same
 * request: new choices go at the end of the lists.
 */
public final class FuzzRequests {
  private FuzzRequests() {}

  /** A method name and one request message's bytes, as the proxy receives them. */
  public record Request(String method, byte[] bytes) {
    @Override
    public String toString() {
      return method + " " + bytes.length + " bytes";
    }
  }

  /**
   * The methods a fuzzed request is sent as: the three that carry most (their indexes fixed for the corpus),
   * the rest of the service in name order, and one no server knows.
   */
  public static final List<String> METHODS = methods();

  static final String[] STATEMENTS = {
    "SELECT 1",
    "SELECT * FROM db.t VERSION AS OF 3",
    "SELECT TRANSFORM(a) USING 'cat /etc/passwd' AS (b) FROM t",
    "SELECT reflect('java.lang.Runtime', 'getRuntime')",
    "SELECT IDENTIFIER('`reflect`')('java.lang.System', 'exit', '0')",
    "SET `spark.sql.catalog.x`=org.example.Evil",
    "CREATE TEMPORARY VIEW v USING text OPTIONS (path '/etc/passwd')",
    "LOAD DATA LOCAL INPATH '/etc/shadow' INTO TABLE t",
    "INSERT OVERWRITE LOCAL DIRECTORY '/tmp/out' SELECT * FROM t",
    "ADD JAR /tmp/evil.jar",
    "CREATE FUNCTION f AS 'org.example.Evil' USING JAR 'file:/tmp/e.jar'",
    "EXECUTE IMMEDIATE 'SELECT java_method(''a'', ''b'')'",
    "USE CATALOG cat",
    "SELECT * FROM cat.db.t TIMESTAMP AS OF '2024-01-01' WHERE x IN (SELECT y FROM `file:/etc`.`x`)",
    "WITH q AS (SELECT * FROM parquet.`/data/x`) SELECT try_reflect(a, b) FROM q",
    "SELECT ${var} FROM t",
    "SET spark.sql.ansi.enabled",
    "RESET",
  };
  static final String[] KEYS = {
    "spark.sql.catalog.x", "spark.sql.catalog.spark_catalog", "spark.sql.extensions", "spark.jars",
    "spark.sql.ansi.enabled", "spark.sql.session.timeZone", "spark.sql.defaultCatalog",
        "spark.sql.warehouse.dir",
    "spark.sql.variable.substitute", "spark.sql.legacy.allowUntypedScalaUDF",
        "spark.hadoop.fs.defaultFS", "",
  };
  static final String[] FUNCTIONS = {
    "reflect",
    "java_method",
    "try_reflect",
    "upper",
    "Reflect",
    "`reflect`",
    "system.builtin.reflect",
    "count",
    "read_files",
    "identifier",
    "explode",
  };
  static final String[] TABLES = {
    "t",
    "db.t",
    "cat.db.t",
    "`file:/etc/passwd`",
    "parquet.`/tmp/x`",
    "spark_catalog.default.t",
    "a.b.c.d",
    "``",
  };
  static final String[] PATHS = {
    "/etc/passwd", "file:/tmp/x", "../up", "s3://bucket/key", "hdfs:///x", "C:\\x", ""
  };
  static final String[] FORMATS = {
    "parquet", "text", "jdbc", "org.example.Source", "delta", "csv", ""
  };
  static final String[] WORDS = {
    "", "t", "x", "path", "versionAsOf", "snapshot-id", "checkpointLocation", "1"
  };

  /** The first byte picks the method, the rest is the request, sent as it is. */
  public static Request raw(byte[] input) {
    if (input.length == 0) return new Request(METHODS.get(0), input);
    return new Request(
        METHODS.get(Byte.toUnsignedInt(input[0]) % METHODS.size()),
        Arrays.copyOfRange(input, 1, input.length));
  }

  /** A request built from the fuzzer's choices, then, if the fuzzer says so, mutated at the byte level. */
  public static Request build(FuzzedDataProvider data) {
    Request built =
        switch (data.consumeInt(0, 7)) {
          case 0 ->
              new Request(
                  "ExecutePlan",
                  execute(Plan.newBuilder().setRoot(relation(data, sqlRelation(data)))));
          case 1 ->
              new Request("ExecutePlan", execute(Plan.newBuilder().setCommand(command(data))));
          case 2 -> new Request("AnalyzePlan", analyze(data));
          case 3 -> new Request("Config", config(data));
          case 4 ->
              new Request(
                  "ExecutePlan",
                  execute(Plan.newBuilder().setRoot(relation(data, tableRead(data)))));
          case 5 -> generic(data, "ExecutePlan");
          case 6 -> generic(data, "AnalyzePlan");
          default -> generic(data, METHODS.get(data.consumeInt(0, METHODS.size() - 1)));
        };
    int mutations = data.consumeInt(0, 3);
    byte[] bytes = built.bytes();
    for (int i = 0; i < mutations && data.remainingBytes() > 0; i++) bytes = mutate(bytes, data);
    return new Request(built.method(), bytes);
  }

  /** A bit flipped, a byte replaced, a wire type changed, a cut, a part repeated, or fuzzer bytes inserted. */
  static byte[] mutate(byte[] bytes, FuzzedDataProvider data) {
    if (bytes.length == 0) return data.consumeBytes(8);
    byte[] c = bytes.clone();
    int at = data.consumeInt(0, c.length - 1);
    switch (data.consumeInt(0, 5)) {
      case 0 -> c[at] ^= (byte) (1 << data.consumeInt(0, 7));
      case 1 -> c[at] = data.consumeByte();
      case 2 -> c[at] = (byte) (c[at] & ~7 | data.consumeInt(0, 7));
      case 3 -> c = Arrays.copyOf(c, at);
      case 4 -> c = concat(c, Arrays.copyOfRange(c, at, c.length));
      default ->
          c =
              concat(
                  Arrays.copyOf(c, at),
                  data.consumeBytes(data.consumeInt(1, 8)),
                  Arrays.copyOfRange(c, at, c.length));
    }
    return c;
  }

  private static byte[] execute(Plan.Builder plan) {
    return ExecutePlanRequest.newBuilder()
        .setSessionId("00000000-0000-4000-8000-000000000001")
        .setUserContext(UserContext.newBuilder().setUserId("alice"))
        .setPlan(plan)
        .build()
        .toByteArray();
  }

  private static Relation sqlRelation(FuzzedDataProvider data) {
    return Relation.newBuilder().setSql(SQL.newBuilder().setQuery(sql(data))).build();
  }

  private static Relation tableRead(FuzzedDataProvider data) {
    Read.Builder read = Read.newBuilder();
    if (data.consumeBoolean()) {
      Read.NamedTable.Builder t =
          Read.NamedTable.newBuilder().setUnparsedIdentifier(pick(data, TABLES));
      if (data.consumeBoolean()) t.putOptions(pick(data, WORDS), pick(data, WORDS));
      read.setNamedTable(t);
    } else {
      Read.DataSource.Builder s = Read.DataSource.newBuilder().setFormat(pick(data, FORMATS));
      for (int i = data.consumeInt(0, 2); i > 0; i--) s.addPaths(pick(data, PATHS));
      if (data.consumeBoolean()) s.putOptions(pick(data, WORDS), pick(data, PATHS));
      read.setDataSource(s).setIsStreaming(data.consumeBoolean());
    }
    return Relation.newBuilder().setRead(read).build();
  }

  /** {@code leaf} under up to 12 layers of limits, projections calling functions, filters, aliases and CTEs. */
  private static Relation relation(FuzzedDataProvider data, Relation leaf) {
    Relation r = leaf;
    for (int layers = data.consumeInt(0, 12); layers > 0; layers--) {
      Relation.Builder b = Relation.newBuilder();
      switch (data.consumeInt(0, 4)) {
        case 0 -> b.setLimit(Limit.newBuilder().setInput(r).setLimit(data.consumeInt(0, 10)));
        case 1 ->
            b.setProject(Project.newBuilder().setInput(r).addExpressions(expression(data, 3)));
        case 2 ->
            b.setFilter(
                Filter.newBuilder()
                    .setInput(r)
                    .setCondition(
                        Expression.newBuilder()
                            .setExpressionString(
                                Expression.ExpressionString.newBuilder()
                                    .setExpression(sql(data)))));
        case 3 ->
            b.setSubqueryAlias(SubqueryAlias.newBuilder().setInput(r).setAlias(pick(data, WORDS)));
        default ->
            b.setWithRelations(
                WithRelations.newBuilder().setRoot(r).addReferences(sqlRelation(data)));
      }
      r = b.build();
    }
    return r;
  }

  private static Expression expression(FuzzedDataProvider data, int depth) {
    if (depth == 0 || data.consumeInt(0, 2) == 0) {
      return Expression.newBuilder()
          .setLiteral(Expression.Literal.newBuilder().setString(pick(data, PATHS)))
          .build();
    }
    Expression.UnresolvedFunction.Builder f =
        Expression.UnresolvedFunction.newBuilder()
            .setFunctionName(
                data.consumeBoolean() ? pick(data, FUNCTIONS) : data.consumeString(24));
    for (int i = data.consumeInt(0, 2); i > 0; i--) f.addArguments(expression(data, depth - 1));
    return Expression.newBuilder().setUnresolvedFunction(f).build();
  }

  private static Command command(FuzzedDataProvider data) {
    if (data.consumeBoolean()) {
      SqlCommand.Builder c = SqlCommand.newBuilder();
      if (data.consumeBoolean()) {
        c.setInput(sqlRelation(data));
      } else {
        c.setSql(sql(data));
      }
      return Command.newBuilder().setSqlCommand(c).build();
    }
    WriteOperation.Builder w =
        WriteOperation.newBuilder()
            .setInput(relation(data, tableRead(data)))
            .setSource(pick(data, FORMATS));
    if (data.consumeBoolean()) {
      w.setPath(pick(data, PATHS));
    } else {
      w.setTable(WriteOperation.SaveTable.newBuilder().setTableName(pick(data, TABLES)));
    }
    if (data.consumeBoolean()) w.putOptions(pick(data, WORDS), pick(data, PATHS));
    return Command.newBuilder().setWriteOperation(w).build();
  }

  private static byte[] analyze(FuzzedDataProvider data) {
    Plan plan =
        Plan.newBuilder()
            .setRoot(relation(data, data.consumeBoolean() ? sqlRelation(data) : tableRead(data)))
            .build();
    AnalyzePlanRequest.Builder b =
        AnalyzePlanRequest.newBuilder()
            .setSessionId("00000000-0000-4000-8000-000000000001")
            .setUserContext(UserContext.newBuilder().setUserId("alice"));
    switch (data.consumeInt(0, 3)) {
      case 0 -> b.setSchema(AnalyzePlanRequest.Schema.newBuilder().setPlan(plan));
      case 1 -> b.setExplain(AnalyzePlanRequest.Explain.newBuilder().setPlan(plan));
      case 2 -> b.setDdlParse(AnalyzePlanRequest.DDLParse.newBuilder().setDdlString(sql(data)));
      default ->
          b.setSameSemantics(
              AnalyzePlanRequest.SameSemantics.newBuilder().setTargetPlan(plan).setOtherPlan(plan));
    }
    return b.build().toByteArray();
  }

  private static byte[] config(FuzzedDataProvider data) {
    ConfigRequest.Operation.Builder op = ConfigRequest.Operation.newBuilder();
    int n = data.consumeInt(1, 3);
    switch (data.consumeInt(0, 3)) {
      case 0 -> {
        ConfigRequest.Set.Builder set = ConfigRequest.Set.newBuilder();
        for (int i = 0; i < n; i++)
          set.addPairs(KeyValue.newBuilder().setKey(key(data)).setValue(pick(data, WORDS)));
        op.setSet(set);
      }
      case 1 -> {
        ConfigRequest.Get.Builder get = ConfigRequest.Get.newBuilder();
        for (int i = 0; i < n; i++) get.addKeys(key(data));
        op.setGet(get);
      }
      case 2 -> {
        ConfigRequest.Unset.Builder unset = ConfigRequest.Unset.newBuilder();
        for (int i = 0; i < n; i++) unset.addKeys(key(data));
        op.setUnset(unset);
      }
      default -> op.setGetAll(ConfigRequest.GetAll.newBuilder().setPrefix(key(data)));
    }
    return ConfigRequest.newBuilder()
        .setSessionId("00000000-0000-4000-8000-000000000001")
        .setUserContext(UserContext.newBuilder().setUserId("alice"))
        .setOperation(op)
        .build()
        .toByteArray();
  }

  private static String sql(FuzzedDataProvider data) {
    return switch (data.consumeInt(0, 3)) {
      case 0 -> data.consumeString(200);
      case 1 -> pick(data, STATEMENTS) + data.consumeString(40);
      default -> pick(data, STATEMENTS);
    };
  }

  private static String key(FuzzedDataProvider data) {
    return data.consumeBoolean() ? pick(data, KEYS) : data.consumeString(40);
  }

  private static String pick(FuzzedDataProvider data, String[] values) {
    return values[data.consumeInt(0, values.length - 1)];
  }

  /**
   * Any request of {@code method}, walking its message types: every oneof case and field can be reached, so
   * a case the templates above leave out is still fuzzed. Strings come from the dictionary their field's
   * name suggests; the fuzzer's bytes running out ends the message.
   */
  private static Request generic(FuzzedDataProvider data, String method) {
    MethodDescriptor md =
        Base.getDescriptor().findServiceByName("SparkConnectService").findMethodByName(method);
    if (md == null) return new Request(method, data.consumeBytes(64));
    Message.Builder b = com.google.protobuf.DynamicMessage.newBuilder(md.getInputType());
    new Generic(data).fill(b, 0);
    return new Request(method, b.buildPartial().toByteArray());
  }

  private static final class Generic {
    private final FuzzedDataProvider data;
    private int budget = 200;

    Generic(FuzzedDataProvider data) {
      this.data = data;
    }

    void fill(Message.Builder b, int depth) {
      if (--budget < 0 || depth > 20 || data.remainingBytes() == 0) return;
      for (OneofDescriptor o : b.getDescriptorForType().getRealOneofs()) {
        int pick = data.consumeInt(0, o.getFieldCount());
        if (pick < o.getFieldCount()) set(b, o.getField(pick), depth);
      }
      for (FieldDescriptor f : b.getDescriptorForType().getFields()) {
        if (f.getRealContainingOneof() == null && data.consumeBoolean()) set(b, f, depth);
      }
    }

    private void set(Message.Builder b, FieldDescriptor f, int depth) {
      if (f.isMapField()) {
        Message.Builder entry = b.newBuilderForField(f);
        for (FieldDescriptor kv : f.getMessageType().getFields())
          entry.setField(kv, value(entry, kv, depth));
        b.addRepeatedField(f, entry.build());
      } else if (f.isRepeated()) {
        for (int i = data.consumeInt(1, 2); i > 0; i--) b.addRepeatedField(f, value(b, f, depth));
      } else {
        b.setField(f, value(b, f, depth));
      }
    }

    private Object value(Message.Builder b, FieldDescriptor f, int depth) {
      return switch (f.getJavaType()) {
        case INT -> data.consumeInt();
        case LONG -> data.consumeLong();
        case FLOAT -> data.consumeFloat();
        case DOUBLE -> data.consumeDouble();
        case BOOLEAN -> data.consumeBoolean();
        case STRING -> string(f.getName());
        case BYTE_STRING -> ByteString.copyFrom(data.consumeBytes(8));
        case ENUM ->
            f.getEnumType()
                .getValues()
                .get(data.consumeInt(0, f.getEnumType().getValues().size() - 1));
        case MESSAGE -> {
          Message.Builder child = b.newBuilderForField(f);
          if (child.getDescriptorForType().equals(Any.getDescriptor())) {
            child.setField(
                Any.getDescriptor().findFieldByName("type_url"),
                "type.googleapis.com/" + data.consumeString(20));
          } else {
            fill(child, depth + 1);
          }
          yield child.buildPartial();
        }
      };
    }

    private String string(String field) {
      if (data.consumeInt(0, 3) == 0) return data.consumeString(40);
      if (field.contains("sql")
          || field.contains("query")
          || field.contains("expression")
          || field.contains("ddl")) {
        return pick(data, STATEMENTS);
      }
      if (field.contains("key") || field.contains("conf")) return pick(data, KEYS);
      if (field.contains("function")) return pick(data, FUNCTIONS);
      if (field.contains("table") || field.contains("identifier") || field.contains("name"))
        return pick(data, TABLES);
      if (field.contains("path")) return pick(data, PATHS);
      if (field.contains("format") || field.contains("source")) return pick(data, FORMATS);
      return pick(data, WORDS);
    }
  }

  private static List<String> methods() {
    List<String> out = new ArrayList<>(List.of("ExecutePlan", "AnalyzePlan", "Config"));
    Base.getDescriptor().findServiceByName("SparkConnectService").getMethods().stream()
        .map(MethodDescriptor::getName)
        .filter(m -> !out.contains(m))
        .sorted()
        .forEach(out::add);
    out.add("NoSuchMethod");
    return List.copyOf(out);
  }
}
