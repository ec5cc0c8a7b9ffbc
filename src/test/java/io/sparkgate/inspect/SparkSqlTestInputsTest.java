package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

final class SparkSqlTestInputsTest {
  private static List<String> statements(String input) {
    return SparkSqlTestInputs.statements(input, name -> null);
  }

  @Test
  void split_at_every_unescaped_semicolon_dropping_comment_lines() {
    assertEquals(
        List.of("SELECT 1", "SELECT 2", "SELECT 'a\\;b'", "SELECT 3\nFROM t"),
        statements(
            "-- a comment; not a statement\nSELECT 1; SELECT 2;\nSELECT 'a\\;b';\n  -- indented comment\n"
                + "SELECT 3\nFROM t;\n\n;\n"));
  }

  @Test
  void query_delimiter_blocks_keep_their_semicolons() {
    assertEquals(
        List.of("SELECT 0", "/* one; two;\n*/\nSELECT 1", "SELECT 2"),
        statements(
            "SELECT 0;\n--QUERY-DELIMITER-START\n/* one; two;\n*/\nSELECT 1;\n--QUERY-DELIMITER-END\n"
                + "SELECT 2;\n"));
  }

  @Test
  void imports_come_first() {
    Map<String, String> files = Map.of("base.sql", "-- base\nSELECT 'base';\n");
    assertEquals(
        List.of("SELECT 'base'", "SELECT 'own'"),
        SparkSqlTestInputs.statements("--IMPORT base.sql\nSELECT 'own';", files::get));
    assertThrows(
        IllegalArgumentException.class, () -> statements("--IMPORT missing.sql\nSELECT 1;"));
  }

  @Test
  void settings_and_the_parser_flags_they_give() {
    var lines =
        SparkSqlTestInputs.lines(
            "--SET spark.sql.ansi.doubleQuotedIdentifiers=true, a.b = c\n"
                + "--CONFIG_DIM1 spark.sql.codegen.wholeStage=true\nSELECT 1;");
    Map<String, String> settings = SparkSqlTestInputs.settings(lines.comments());
    assertEquals(Map.of("spark.sql.ansi.doubleQuotedIdentifiers", "true", "a.b", "c"), settings);
    assertEquals(new SqlParserFlags(false, false, false, true), SparkSqlTestInputs.flags(settings));
    assertEquals(
        new SqlParserFlags(false, false, false, false),
        SparkSqlTestInputs.flags(
            Map.of(
                "spark.sql.ansi.doubleQuotedIdentifiers",
                "true",
                "spark.sql.ansi.enabled",
                "false")));
  }
}
