package io.sparkgate.opa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.grants.Verdict;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.Inspector;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The input document against its published schema (policies/opa/input.schema.json), and what it hides. */
final class InputDocumentTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final BackendProfile PROFILE =
      new BackendProfile(
          "4.0.0",
          List.of("org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"),
          Map.of("iceberg", "org.apache.iceberg.spark.SparkCatalog"),
          "spark_catalog");

  private final InputDocument input =
      new InputDocument(false, new SecretPatterns(AuthConfig.DEFAULT_SECRET_PATTERNS));

  private static Facts sql(String text) {
    return new Inspector().inspectSql(text, PROFILE.freshSession());
  }

  private static Question question(Facts facts, Verdict verdict, BackendProfile profile) {
    return new Question(
        "ExecutePlan",
        "alice",
        List.of("analysts", "finance"),
        Optional.of("acme"),
        "jwt",
        "default",
        profile,
        facts,
        verdict,
        "allow",
        "default");
  }

  private JsonNode document(Question q) throws Exception {
    return JSON.readTree(input.request(q)).get("input");
  }

  @Test
  void document_fitsSchemaV1_forSeveralRequests() throws Exception {
    JsonNode schema = JSON.readTree(Path.of("policies", "opa", "input.schema.json").toFile());
    for (String text :
        List.of(
            "SELECT * FROM finance.payroll WHERE amount > 100",
            "INSERT INTO finance.payroll VALUES (1, 2)",
            "SET spark.sql.shuffle.partitions=4",
            "SELECT * FROM parquet.`s3a://AKIA:topsecret@bucket/x` t",
            "CREATE NAMESPACE finance_eu",
            "SHOW TABLES IN finance")) {
      for (BackendProfile p : java.util.Arrays.asList(PROFILE, null)) {
        JsonNode doc = document(question(sql(text), null, p));
        List<String> problems = new ArrayList<>();
        check(schema, doc, "input", problems);
        assertEquals(List.of(), problems, text + ": " + doc);
      }
    }
  }

  @Test
  void document_carriesPrincipalRpcPoolBackendFactsAndAccesses() throws Exception {
    JsonNode doc =
        document(question(sql("INSERT INTO finance.payroll VALUES (1, 2)"), null, PROFILE));
    assertEquals(1, doc.get("version").intValue());
    assertEquals("alice", doc.at("/principal/name").textValue());
    assertEquals("finance", doc.at("/principal/groups/1").textValue());
    assertEquals("acme", doc.at("/principal/tenant").textValue());
    assertEquals("ExecutePlan", doc.get("rpc").textValue());
    assertEquals("default", doc.get("pool").textValue());
    assertEquals("4.0.0", doc.at("/backend/spark_version").textValue());
    assertEquals(
        "org.apache.iceberg.spark.SparkCatalog", doc.at("/backend/catalogs/iceberg").textValue());
    JsonNode write = doc.at("/data/0");
    assertEquals("table", write.get("target").textValue());
    assertEquals("spark_catalog.finance.payroll", write.get("qualified").textValue());
    assertEquals("finance", write.get("namespace").textValue());
    assertEquals("modify", write.get("privilege").textValue());
    boolean tableWrite = false;
    for (JsonNode f : doc.get("facts")) {
      tableWrite |= f.get("kind").textValue().equals("TABLE_WRITE");
    }
    assertTrue(tableWrite, doc.toString());
    assertEquals("allow", doc.at("/local/effect").textValue());
  }

  @Test
  void secretsCredentialsLiteralsAndPerCallIds_neverSent() throws Exception {
    String text =
        new String(
            input.request(
                question(
                    sql(
                        "SELECT * FROM parquet.`s3a://AKIA:topsecret@bucket/x` WHERE name = 'Jane"
                            + " Doe'"),
                    null,
                    PROFILE)),
            StandardCharsets.UTF_8);
    assertFalse(text.contains("topsecret"), text);
    assertFalse(text.contains("Jane Doe"), text);
    assertTrue(text.contains("s3a://***@bucket/x"), text);
    String set =
        new String(
            input.request(
                question(sql("SET spark.hadoop.fs.s3a.secret.key=hunter2"), null, PROFILE)),
            StandardCharsets.UTF_8);
    assertFalse(set.contains("hunter2"), set);
    assertTrue(set.contains(SecretPatterns.REDACTED), set);
  }

  @Test
  void equalQuestions_equalBytes_otherwiseNot() {
    byte[] a = input.request(question(sql("SELECT 1"), null, PROFILE));
    byte[] b = input.request(question(sql("SELECT 1"), null, PROFILE));
    assertArrayEquals(a, b);
    assertFalse(
        java.util.Arrays.equals(a, input.request(question(sql("SELECT 2 FROM t"), null, PROFILE))));
  }

  /** A hand-written check of what the schema uses: type, const, enum, required, properties, items. */
  private static void check(JsonNode schema, JsonNode value, String at, List<String> problems) {
    JsonNode type = schema.get("type");
    if (type != null) {
      boolean ok = false;
      for (JsonNode t : type.isArray() ? type : JSON.createArrayNode().add(type)) {
        ok |= is(t.textValue(), value);
      }
      if (!ok) {
        problems.add(at + ": expected " + type + ", got " + value.getNodeType());
        return;
      }
    }
    if (schema.has("const") && !schema.get("const").equals(value)) {
      problems.add(at + ": expected " + schema.get("const") + ", got " + value);
    }
    if (schema.has("enum")) {
      boolean found = false;
      for (JsonNode e : schema.get("enum")) found |= e.equals(value);
      if (!found) problems.add(at + ": " + value + " not in " + schema.get("enum"));
    }
    if (value.isObject()) {
      if (schema.has("required")) {
        for (JsonNode r : schema.get("required")) {
          if (!value.has(r.textValue())) problems.add(at + ": missing " + r.textValue());
        }
      }
      JsonNode props = schema.get("properties");
      Iterator<Map.Entry<String, JsonNode>> fields = value.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> f = fields.next();
        JsonNode sub = props == null ? null : props.get(f.getKey());
        if (sub == null) sub = schema.get("additionalProperties");
        if (sub == null) {
          problems.add(at + "." + f.getKey() + ": not in the schema");
        } else {
          check(sub, f.getValue(), at + "." + f.getKey(), problems);
        }
      }
    }
    if (value.isArray() && schema.has("items")) {
      for (int i = 0; i < value.size(); i++) {
        check(schema.get("items"), value.get(i), at + "[" + i + "]", problems);
      }
    }
  }

  private static boolean is(String type, JsonNode v) {
    return switch (type) {
      case "object" -> v.isObject();
      case "array" -> v.isArray();
      case "string" -> v.isTextual();
      case "integer" -> v.isIntegralNumber();
      case "boolean" -> v.isBoolean();
      case "null" -> v.isNull();
      default -> false;
    };
  }
}
