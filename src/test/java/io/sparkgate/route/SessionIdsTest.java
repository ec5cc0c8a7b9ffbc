package io.sparkgate.route;

import static io.sparkgate.testing.WireBytes.concat;
import static io.sparkgate.testing.WireBytes.field;
import static io.sparkgate.testing.WireBytes.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

final class SessionIdsTest {
  @Test
  void readsTheSessionAndTheUser_lastOccurrenceWins() {
    byte[] request =
        concat(
            field(1, utf8("first")),
            field(2, field(1, utf8("mallory"))),
            field(4, utf8("something else")),
            field(1, utf8("s-1")),
            field(2, concat(field(2, utf8("name only")))),
            field(2, field(1, utf8("alice"))));
    assertEquals(new SessionIds("alice", "s-1"), SessionIds.read(request));
  }

  @Test
  void garbage_readsAsNothing() {
    assertEquals(SessionIds.NONE, SessionIds.read(new byte[] {(byte) 0x0a, (byte) 0xff}));
    assertEquals(SessionIds.NONE, SessionIds.read(new byte[0]));
  }
}
