package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class RequestIdsTest {
  @Test
  void areDistinctVersion4Uuids() {
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 100_000; i++) {
      String id = RequestIds.next();
      UUID u = UUID.fromString(id);
      assertEquals(4, u.version(), id);
      assertEquals(2, u.variant(), id);
      assertEquals(u.toString(), id);
      assertTrue(seen.add(id), "repeated " + id);
    }
  }

  @Test
  void threadsDoNotRepeatEachOther() throws Exception {
    Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
    Thread[] threads = new Thread[4];
    for (int t = 0; t < threads.length; t++) {
      threads[t] = new Thread(() -> {
        for (int i = 0; i < 25_000; i++) {
          seen.add(RequestIds.next());
        }
      });
      threads[t].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    assertEquals(100_000, seen.size());
  }
}
