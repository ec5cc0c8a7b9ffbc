package io.sparkgate.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

final class RendezvousTest {
  private static final List<String> THREE = List.of("a:1", "b:1", "c:1");

  @Test
  void sameInputs_sameWinner_whateverTheOrder() {
    for (int i = 0; i < 200; i++) {
      String s = "session-" + i;
      String winner = Rendezvous.pick(THREE, "alice", s);
      assertEquals(winner, Rendezvous.pick(List.of("c:1", "a:1", "b:1"), "alice", s));
    }
    assertNull(Rendezvous.pick(List.of(), "alice", "s"));
  }

  @Test
  void sessionsSpreadOverEveryBackend() {
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < 3000; i++) {
      counts.merge(Rendezvous.pick(THREE, "u" + (i % 7), "session-" + i), 1, Integer::sum);
    }
    for (String b : THREE) {
      assertTrue(counts.get(b) > 800 && counts.get(b) < 1200, counts.toString());
    }
  }

  @Test
  void aBackendLeaving_movesOnlyTheSessionsItWon() {
    List<String> two = new ArrayList<>(THREE);
    two.remove("c:1");
    for (int i = 0; i < 1000; i++) {
      String s = "session-" + i;
      String before = Rendezvous.pick(THREE, "bob", s);
      String after = Rendezvous.pick(two, "bob", s);
      if (!before.equals("c:1")) assertEquals(before, after, s);
    }
  }
}
