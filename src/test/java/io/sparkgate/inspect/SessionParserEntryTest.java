package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.Catalog;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.DataType;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Expression;
import io.sparkgate.proto.spark.KeyValue;
import io.sparkgate.proto.spark.LocalRelation;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Project;
import io.sparkgate.proto.spark.Range;
import io.sparkgate.proto.spark.Read;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.TableExists;
import io.sparkgate.proto.spark.UserContext;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every request field Spark hands its session parser goes through one entry point that does what
 * SparkSqlParser does first: a string that variable substitution would rewrite is refused unread, wherever it
 * sits, and read as sent where the backend has substitution off. The parser switches are the backend's.
 */
final class SessionParserEntryTest {
  private static final UserContext USER = UserContext.newBuilder().setUserId("alice").build();
  private static final SessionView SUBSTITUTING = profile(Map.of()).freshSession();
  private static final SessionView NOT_SUBSTITUTING =
      profile(Map.of("spark.sql.variable.substitute", "false")).freshSession();

  private final Inspector inspector = new Inspector();

  private static BackendProfile profile(Map<String, String> settings) {
    return new BackendProfile(
        "4.0.0", List.of(), Map.of(), null, null, ParserSettings.of("4.0.0", settings));
  }

  @Test
  void the_pattern_is_sparks_own() {
    // ConfigReader's pattern, as Spark compiles it (Scala's Regex is java.util.regex).
    Pattern spark = Pattern.compile("\\$\\{(?:(\\w+?):)?(\\S+?)\\}");
    for (String s :
        List.of(
            "${x}",
            "'${env:HOME}'",
            "${a'--'}",
            "${ x }",
            "$5",
            "${}",
            "${x y}",
            "$ {x}",
            "${\tx}",
            "${x\u00a0y}",
            "${x\u2028}",
            "${{x}}",
            "\\${x}",
            "${x")) {
      assertEquals(
          spark.matcher(s).find(), SUBSTITUTING.parser().substitutes(s), "pattern on " + s);
    }
    assertFalse(NOT_SUBSTITUTING.parser().substitutes("${x}"));
  }

  @Test
  void a_substituted_expression_string_is_refused_unread_and_shown_to_the_audit() {
    String text = "'${a'--'}'||java_method('java.lang.System','getenv','HOME')";
    Facts facts = execute(projectOf(expressionString(text)), SUBSTITUTING);
    assertEquals(List.of("variable_substitution"), unclassified(facts));
    assertEquals("${a'--'}", facts.ofKind(Fact.Kind.UNCLASSIFIED).get(0).get("reference"));
    // Unread: no function of it is reported, since none is known to be what Spark reads.
    assertTrue(facts.ofKind(Fact.Kind.FUNCTION_CALL).isEmpty(), facts.toString());
    assertEquals(text, facts.ofKind(Fact.Kind.EXPRESSION).get(0).get("text"));

    // Read as sent when the server does not substitute: a literal, then a comment.
    Facts off = execute(projectOf(expressionString(text)), NOT_SUBSTITUTING);
    assertEquals(List.of(), unclassified(off));
    assertTrue(off.ofKind(Fact.Kind.FUNCTION_CALL).isEmpty(), off.toString());
  }

  @Test
  void every_session_parser_field_is_checked() {
    Expression cast =
        Expression.newBuilder()
            .setCast(
                Expression.Cast.newBuilder()
                    .setExpr(literal("x"))
                    .setTypeStr("STRUCT<a: INT COMMENT '${env:HOME}'>"))
            .build();
    Expression unparsed =
        Expression.newBuilder()
            .setCast(
                Expression.Cast.newBuilder()
                    .setExpr(literal("x"))
                    .setType(
                        DataType.newBuilder()
                            .setUnparsed(
                                DataType.Unparsed.newBuilder()
                                    .setDataTypeString("INT COMMENT '${system:user.name}'"))))
            .build();
    Expression udfName =
        Expression.newBuilder()
            .setUnresolvedFunction(
                Expression.UnresolvedFunction.newBuilder()
                    .setFunctionName("`${env:HOME}`")
                    .setIsUserDefinedFunction(true))
            .build();
    Relation table =
        Relation.newBuilder()
            .setRead(
                Read.newBuilder()
                    .setNamedTable(Read.NamedTable.newBuilder().setUnparsedIdentifier("`${x}`")))
            .build();
    Relation local =
        Relation.newBuilder()
            .setLocalRelation(LocalRelation.newBuilder().setSchema("a INT COMMENT '${x}'"))
            .build();
    Relation parameter =
        Relation.newBuilder()
            .setSql(SQL.newBuilder().setQuery("SELECT :p").putArgs("p", literalOf("${env:HOME}")))
            .build();
    Relation catalog =
        Relation.newBuilder()
            .setCatalog(
                Catalog.newBuilder()
                    .setTableExists(TableExists.newBuilder().setTableName("`${env:HOME}`")))
            .build();
    Relation statement =
        Relation.newBuilder().setSql(SQL.newBuilder().setQuery("SELECT 1 -- ${x}")).build();
    for (Relation root :
        List.of(
            projectOf(cast),
            projectOf(unparsed),
            projectOf(udfName),
            table,
            local,
            parameter,
            catalog,
            statement)) {
      Facts on = execute(root, SUBSTITUTING);
      assertTrue(unclassified(on).contains("variable_substitution"), root + " gave " + on);
      Facts off = execute(root, NOT_SUBSTITUTING);
      assertFalse(unclassified(off).contains("variable_substitution"), root + " gave " + off);
    }

    byte[] ddl =
        AnalyzePlanRequest.newBuilder()
            .setSessionId("s1")
            .setUserContext(USER)
            .setDdlParse(
                AnalyzePlanRequest.DDLParse.newBuilder()
                    .setDdlString("a INT COMMENT '${env:HOME}'"))
            .build()
            .toByteArray();
    assertEquals(
        List.of("variable_substitution"),
        unclassified(inspector.inspect("AnalyzePlan", ddl, SUBSTITUTING)));
  }

  @Test
  void column_defaults_in_a_catalog_schema_are_read_as_expressions() {
    Facts call = createTableWithDefault("{\"CURRENT_DEFAULT\":\"java_method('a', 'b')\"}");
    assertEquals("java_method", call.ofKind(Fact.Kind.FUNCTION_CALL).get(0).get("name"));
    assertEquals(
        List.of("variable_substitution"),
        unclassified(createTableWithDefault("{\"EXISTS_DEFAULT\":\"'${env:HOME}'\"}")));
    assertEquals(
        List.of("unreadable_metadata"),
        unclassified(
            createTableWithDefault(
                "{\"CURRENT_DEFAULT\":\"1\",\"CURRENT_DEFAULT\":\"java_method('a')\"}")));
    assertEquals(List.of(), unclassified(createTableWithDefault("{\"comment\":\"x\"}")));
  }

  private Facts createTableWithDefault(String metadata) {
    DataType schema =
        DataType.newBuilder()
            .setStruct(
                DataType.Struct.newBuilder()
                    .addFields(
                        DataType.StructField.newBuilder()
                            .setName("a")
                            .setDataType(
                                DataType.newBuilder()
                                    .setString(DataType.String.getDefaultInstance()))
                            .setNullable(true)
                            .setMetadata(metadata)))
            .build();
    Relation root =
        Relation.newBuilder()
            .setCatalog(
                Catalog.newBuilder()
                    .setCreateTable(
                        io.sparkgate.proto.spark.CreateTable.newBuilder()
                            .setTableName("t")
                            .setSchema(schema)))
            .build();
    return execute(root, SUBSTITUTING);
  }

  @Test
  void pipeline_names_are_checked() {
    byte[] request =
        ExecutePlanRequest.newBuilder()
            .setSessionId("s1")
            .setUserContext(USER)
            .setOperationId("op1")
            .setPlan(
                Plan.newBuilder()
                    .setCommand(
                        io.sparkgate.proto.spark.Command.newBuilder()
                            .setPipelineCommand(
                                io.sparkgate.proto.spark.PipelineCommand.newBuilder()
                                    .setDefineOutput(
                                        io.sparkgate.proto.spark.PipelineCommand.DefineOutput
                                            .newBuilder()
                                            .setDataflowGraphId("g")
                                            .setOutputName("`${env:HOME}`")))))
            .build()
            .toByteArray();
    assertTrue(
        unclassified(inspector.inspect("ExecutePlan", request, SUBSTITUTING))
            .contains("variable_substitution"));
    assertFalse(
        unclassified(inspector.inspect("ExecutePlan", request, NOT_SUBSTITUTING))
            .contains("variable_substitution"));
  }

  @Test
  void ordinary_dollar_signs_and_unparsed_literals_pass() {
    Facts facts =
        execute(
            projectOf(
                expressionString("concat('$5', '${ x }', '$', '{x}')"), literal("${env:HOME}")),
            SUBSTITUTING);
    assertEquals(List.of(), unclassified(facts));
    assertEquals("concat", facts.ofKind(Fact.Kind.FUNCTION_CALL).get(0).get("name"));
  }

  @Test
  void execute_immediate_text_is_checked_after_unescaping() {
    // The literal holds no "${" as written; its value does, and Spark parses the value again.
    Facts facts =
        inspector.inspectSql("EXECUTE IMMEDIATE 'SELECT \\u0024{env:HOME}'", SUBSTITUTING);
    assertEquals(List.of("variable_substitution"), unclassified(facts));
    // Values spliced into the text by newer releases: escapes and adjacent literals build the
    // reference.
    for (String using :
        List.of(
            "EXECUTE IMMEDIATE 'SELECT ?' USING '\\u0024{env:HOME}'",
            "EXECUTE IMMEDIATE 'SELECT ?' USING '$' '{env:HOME}'")) {
      assertEquals(
          List.of("variable_substitution"),
          unclassified(inspector.inspectSql(using, SUBSTITUTING)),
          using);
    }
    assertEquals(
        List.of(),
        unclassified(
            inspector.inspectSql("EXECUTE IMMEDIATE 'SELECT ?' USING '$5'", SUBSTITUTING)));
  }

  @Test
  void the_parser_switches_are_the_backends() {
    SessionView quoted =
        profile(Map.of("spark.sql.ansi.doubleQuotedIdentifiers", "true")).freshSession();
    Facts facts = inspector.inspectSql("SELECT \"reflect\"('a', 'b')", quoted);
    assertEquals("reflect", facts.ofKind(Fact.Kind.FUNCTION_CALL).get(0).get("name"));
    // Gated by ANSI mode, as in SQLConf.
    SessionView gated =
        profile(
                Map.of(
                    "spark.sql.ansi.doubleQuotedIdentifiers", "true",
                    "spark.sql.ansi.enabled", "false"))
            .freshSession();
    assertEquals(List.of(), unclassified(inspector.inspectSql("SELECT \"reflect\"", gated)));
    assertTrue(
        inspector
            .inspectSql("SELECT \"reflect\"('a', 'b')", gated)
            .ofKind(Fact.Kind.FUNCTION_CALL)
            .isEmpty());

    SessionView escaped =
        profile(Map.of("spark.sql.parser.escapedStringLiterals", "true")).freshSession();
    assertEquals(
        List.of("backend_parser_setting"), unclassified(inspector.inspectSql("SELECT 1", escaped)));
  }

  @Test
  void a_session_may_not_change_a_parser_setting() {
    for (String key :
        List.of(
            "spark.sql.variable.substitute",
            "spark.sql.ansi.enforceReservedKeywords",
            "spark.sql.ansi.doubleQuotedIdentifiers",
            "spark.sql.parser.escapedStringLiterals",
            "spark.sql.parser.quotedRegexColumnNames",
            "spark.sql.legacy.setopsPrecedence.enabled")) {
      assertEquals(
          List.of("parser_setting"),
          unclassified(inspector.inspectSql("SET " + key + "=true", SUBSTITUTING)),
          key);
      assertEquals(List.of("parser_setting"), unclassified(configSet(key, "true", SUBSTITUTING)));
    }
    // ANSI mode gates the two ANSI switches: a parser setting only where the server turned one on.
    assertEquals(
        List.of(), unclassified(configSet("spark.sql.ansi.enabled", "false", SUBSTITUTING)));
    SessionView reserved =
        profile(Map.of("spark.sql.ansi.enforceReservedKeywords", "true")).freshSession();
    assertEquals(
        List.of("parser_setting"),
        unclassified(configSet("spark.sql.ansi.enabled", "false", reserved)));
    // Keys are compared as Spark compares them: another case is another (inert) key.
    assertEquals(
        List.of(), unclassified(configSet("Spark.Sql.Variable.Substitute", "false", SUBSTITUTING)));
  }

  @Test
  void the_profiler_reads_the_parser_settings() {
    BackendProfile p =
        BackendProfiler.fromResponses(
            "4.0.0",
            List.of(),
            List.of(
                KeyValue.newBuilder()
                    .setKey("spark.sql.variable.substitute")
                    .setValue(" FALSE ")
                    .build(),
                KeyValue.newBuilder()
                    .setKey("spark.sql.ansi.doubleQuotedIdentifiers")
                    .setValue("true")
                    .build()));
    assertFalse(p.parser().substitution());
    assertTrue(p.parser().flags().doubleQuotedIdentifiers());
    assertFalse(p.freshSession().parser().substitution());
    // Unknown: Spark's defaults, substitution on.
    assertTrue(BackendProfile.UNKNOWN.parser().substitution());
    assertFalse(ParserSettings.of("3.5.7", Map.of()).ansi());
  }

  private Facts configSet(String key, String value, SessionView session) {
    byte[] request =
        ConfigRequest.newBuilder()
            .setSessionId("s1")
            .setUserContext(USER)
            .setOperation(
                ConfigRequest.Operation.newBuilder()
                    .setSet(
                        ConfigRequest.Set.newBuilder()
                            .addPairs(KeyValue.newBuilder().setKey(key).setValue(value))))
            .build()
            .toByteArray();
    return inspector.inspect("Config", request, session);
  }

  private Facts execute(Relation root, SessionView session) {
    byte[] request =
        ExecutePlanRequest.newBuilder()
            .setSessionId("s1")
            .setUserContext(USER)
            .setOperationId("op1")
            .setPlan(Plan.newBuilder().setRoot(root))
            .build()
            .toByteArray();
    return inspector.inspect("ExecutePlan", request, session);
  }

  private static List<String> unclassified(Facts facts) {
    return facts.ofKind(Fact.Kind.UNCLASSIFIED).stream().map(Fact::subkind).distinct().toList();
  }

  private static Relation projectOf(Expression... expressions) {
    Project.Builder p =
        Project.newBuilder().setInput(Relation.newBuilder().setRange(Range.newBuilder().setEnd(1)));
    for (Expression e : expressions) p.addExpressions(e);
    return Relation.newBuilder().setProject(p).build();
  }

  private static Expression expressionString(String text) {
    return Expression.newBuilder()
        .setExpressionString(Expression.ExpressionString.newBuilder().setExpression(text))
        .build();
  }

  private static Expression.Literal literalOf(String s) {
    return Expression.Literal.newBuilder().setString(s).build();
  }

  private static Expression literal(String s) {
    return Expression.newBuilder().setLiteral(literalOf(s)).build();
  }
}
