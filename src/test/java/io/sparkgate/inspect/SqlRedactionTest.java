package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SqlRedactionTest {
  @Test
  void replacesLiteralsAndDropsComments() {
    assertEquals(
        "SELECT ?, ?, ? FROM t WHERE name = ?   AND x > ?", // the comment took its newline
        SqlRedaction.redactLiterals(
            "SELECT 1, 2.5, 3L FROM t WHERE name = 'alice' -- who\n AND x > 1e3"));
    assertEquals(
        "SELECT a FROM t   WHERE b = ?",
        SqlRedaction.redactLiterals("SELECT a FROM t /* card 4111 */ WHERE b = \"x\""));
  }

  @Test
  void aRememberedTextGivesTheSameAnswer() {
    String sql = "SELECT * FROM orders WHERE card = '4111-1111' AND amount > 12.50";
    String first = SqlRedaction.redactLiterals(sql);
    assertEquals("SELECT * FROM orders WHERE card = ? AND amount > ?", first);
    assertEquals(
        first, SqlRedaction.redactLiterals(new String(sql.toCharArray())), "from the memo");
  }

  @Test
  void longTextsAreRedactedWithoutTheMemo() {
    String body = " OR id = 'secret'".repeat(SqlRedaction.MAX_MEMO_CHARS / 10);
    String sql = "SELECT 1 FROM t WHERE id = 'x'" + body;
    String expected =
        "SELECT ? FROM t WHERE id = ?" + " OR id = ?".repeat(SqlRedaction.MAX_MEMO_CHARS / 10);
    assertEquals(expected, SqlRedaction.redactLiterals(sql));
    assertEquals(expected, SqlRedaction.redactLiterals(sql));
  }
}
