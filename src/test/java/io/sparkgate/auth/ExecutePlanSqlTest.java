package io.sparkgate.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import io.sparkgate.proto.spark.Command;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Range;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.RelationCommon;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.SqlCommand;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ExecutePlanSql} against the parsed request it replaces ({@link SecretRedaction#parsedSql}): the same
 * SQL for every request that parses, on canonical encodings straight from the builders and on merged,
 * overridden, truncated and corrupted ones; and never the fast path where protobuf would merge or override.
 */
final class ExecutePlanSqlTest {
  private static final String[] TEXTS = {"SELECT 1", "SET spark.connect.authenticate.token", "SET -v",
      "ſet x", "", "SELECT 'ü€𝄞'", "EXECUTE IMMEDIATE 'SET a'"};

  @SuppressWarnings("deprecation")
  private static ExecutePlanRequest random(Random r) {
    ExecutePlanRequest.Builder request = ExecutePlanRequest.newBuilder().setSessionId("s" + r.nextInt(9));
    if (r.nextInt(10) == 0) {
      return request.build(); // no plan
    }
    Plan.Builder plan = Plan.newBuilder();
    switch (r.nextInt(3)) {
      case 0 -> plan.setRoot(relation(r));
      case 1 -> {
        SqlCommand.Builder command = SqlCommand.newBuilder();
        if (r.nextBoolean()) {
          command.setSql(TEXTS[r.nextInt(TEXTS.length)]);
        }
        if (r.nextBoolean()) {
          command.setInput(relation(r));
        }
        if (r.nextBoolean()) {
          command.putArgs("k", io.sparkgate.proto.spark.Expression.Literal.newBuilder().setInteger(1).build());
        }
        plan.setCommand(Command.newBuilder().setSqlCommand(command));
      }
      default -> plan.setCommand(Command.newBuilder().setSqlCommand(SqlCommand.getDefaultInstance()));
    }
    return request.setPlan(plan).setOperationId("op").build();
  }

  private static Relation relation(Random r) {
    Relation.Builder relation = Relation.newBuilder();
    if (r.nextBoolean()) {
      relation.setCommon(RelationCommon.newBuilder().setPlanId(r.nextInt(100)));
    }
    return r.nextInt(4) == 0
        ? relation.setRange(Range.newBuilder().setEnd(10)).build()
        : relation.setSql(SQL.newBuilder().setQuery(TEXTS[r.nextInt(TEXTS.length)])).build();
  }

  /** What SecretRedaction now does: the wire read, or the parse when the encoding is not canonical. */
  private static String fast(byte[] bytes) throws InvalidProtocolBufferException {
    try {
      return ExecutePlanSql.of(bytes);
    } catch (ExecutePlanSql.NotCanonical e) {
      return SecretRedaction.parsedSql(ExecutePlanRequest.parseFrom(bytes));
    }
  }

  @Test
  void canonicalEncodings_readOnTheFastPath_withTheParsedAnswer() throws Exception {
    Random r = new Random(1);
    for (int i = 0; i < 3000; i++) {
      ExecutePlanRequest request = random(r);
      assertEquals(SecretRedaction.parsedSql(request), ExecutePlanSql.of(request.toByteArray()), request.toString());
    }
  }

  @Test
  void mergedCorruptedAndTruncatedEncodings_giveTheParsedAnswer() throws Exception {
    Random r = new Random(2);
    int compared = 0;
    for (int i = 0; i < 20_000; i++) {
      byte[] bytes = random(r).toByteArray();
      switch (r.nextInt(4)) {
        case 0 -> bytes = concat(bytes, random(r).toByteArray()); // protobuf merges: later oneofs override
        case 1 -> bytes[r.nextInt(Math.max(1, bytes.length))] ^= (byte) (1 << r.nextInt(8));
        case 2 -> bytes = Arrays.copyOf(bytes, r.nextInt(bytes.length + 1));
        default -> bytes = concat(bytes, ExecutePlanRequest.newBuilder().setPlan(Plan.newBuilder().setCommand(
            Command.newBuilder().setSqlCommand(SqlCommand.newBuilder().setInput(relation(r))))).build().toByteArray());
      }
      ExecutePlanRequest parsed;
      try {
        parsed = ExecutePlanRequest.parseFrom(bytes);
      } catch (InvalidProtocolBufferException e) {
        continue; // the server refuses it; the proxy may judge it either way
      }
      assertEquals(SecretRedaction.parsedSql(parsed), fast(bytes), "case " + i);
      compared++;
    }
    assertTrue(compared > 10_000, "compared " + compared);
  }

  @Test
  void aSecondPlanOrOneofMember_isNeverReadOnTheFastPath() {
    byte[] select = ExecutePlanRequest.newBuilder().setPlan(Plan.newBuilder().setRoot(
        Relation.newBuilder().setSql(SQL.newBuilder().setQuery("SELECT 1")))).build().toByteArray();
    byte[] set = ExecutePlanRequest.newBuilder().setPlan(Plan.newBuilder().setCommand(Command.newBuilder()
        .setSqlCommand(SqlCommand.newBuilder().setInput(Relation.newBuilder().setSql(
            SQL.newBuilder().setQuery("SET spark.connect.authenticate.token")))))).build().toByteArray();
    // A second plan field (merged: the command overrides the root) must not be read as the first plan's SQL.
    assertThrows(ExecutePlanSql.NotCanonical.class, () -> ExecutePlanSql.of(concat(select, set)));
    // Invalid UTF-8 in the query: the request does not parse, so the fast path must not vouch for it.
    byte[] bad = ExecutePlanRequest.newBuilder().setPlan(Plan.newBuilder().setRoot(Relation.newBuilder()
        .setSql(SQL.newBuilder().setQuery("SZ")))).build().toByteArray();
    bad[bad.length - 1] = (byte) 0xC0; // the Z, last byte of the encoding: a lead byte with nothing after it
    assertThrows(InvalidProtocolBufferException.class, () -> ExecutePlanRequest.parseFrom(bad));
    assertThrows(ExecutePlanSql.NotCanonical.class, () -> ExecutePlanSql.of(bad));
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
