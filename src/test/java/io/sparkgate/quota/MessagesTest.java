package io.sparkgate.quota;

import static io.sparkgate.quota.QuotaCalls.principal;
import static io.sparkgate.quota.QuotaCalls.uuid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgate.call.Principal;
import io.sparkgate.forward.Payload;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import io.sparkgate.testing.WireBytes;
import org.junit.jupiter.api.Test;

/** The fields read from the encoding, against messages built by protobuf (and a few built by hand). */
final class MessagesTest {
  private final Principal alice = principal("alice", null);
  private final String session = uuid();

  @Test
  void reattachable() {
    assertTrue(Messages.reattachable(QuotaCalls.execute(alice, session, uuid(), true)));
    assertFalse(Messages.reattachable(QuotaCalls.execute(alice, session, uuid(), false)));
    assertFalse(Messages.reattachable(new byte[] {(byte) 0xff, 0x01}), "malformed reads as no");
    // reattachable = false, written explicitly inside reattach_options
    byte[] off = WireBytes.field(5, WireBytes.field(1, new byte[] {0x08, 0x00}));
    assertFalse(Messages.reattachable(off));
    byte[] on = WireBytes.field(5, WireBytes.field(1, new byte[] {0x08, 0x01}));
    assertTrue(Messages.reattachable(on));
  }

  @Test
  void releaseAll() {
    assertTrue(Messages.releasesAll(QuotaCalls.releaseAll(alice, session, uuid())));
    assertFalse(Messages.releasesAll(QuotaCalls.releaseUntil(alice, session, uuid())));
  }

  @Test
  void interruptType() {
    assertEquals(
        Messages.INTERRUPT_OPERATION_ID,
        Messages.interruptType(QuotaCalls.interruptOperation(alice, session, uuid())));
    assertEquals(
        Messages.INTERRUPT_ALL, Messages.interruptType(QuotaCalls.interruptAll(alice, session)));
    assertEquals(2, Messages.interruptType(QuotaCalls.interruptTag(alice, session, "t")));
  }

  @Test
  void resultComplete_isFoundAtTheTopLevel_andABatchIsNotReadPastItsStart() {
    String op = uuid();
    assertTrue(Messages.resultComplete(Payload.of(QuotaCalls.resultComplete(session, op))));
    assertFalse(Messages.resultComplete(Payload.of(QuotaCalls.batch(session, op))));
    assertFalse(
        Messages.resultComplete(
            Payload.of(
                ExecutePlanResponse.newBuilder()
                    .setSessionId(session)
                    .setSchema(io.sparkgate.proto.spark.DataType.getDefaultInstance())
                    .build()
                    .toByteArray())));
    // A batch cut short after its first bytes: the reader stops at field 2 and never sees the cut.
    byte[] batch = QuotaCalls.batch(session, op);
    byte[] head = java.util.Arrays.copyOf(batch, 60);
    assertFalse(Messages.resultComplete(Payload.of(head)));
    assertFalse(Messages.resultComplete(Payload.of(new byte[] {(byte) 0x82})), "malformed");
  }
}
