package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class PolicyStoreTest {
  private static final String ONE = "rules:\n  - {name: a, description: d, effect: allow}\n";
  private static final String TWO =
      "rules:\n  - {name: a, description: d, effect: allow}\n  - {name: b, description: d, effect: deny}\n";

  @TempDir Path dir;

  private PolicyStore store(Path file) {
    return new PolicyStore(file, new PolicyCompiler(Effect.DENY, Set.of()));
  }

  @Test
  void reload_validFileIsSwappedIn() throws Exception {
    Path f = Files.writeString(dir.resolve("p.yaml"), ONE);
    PolicyStore store = store(f);
    Policy before = store.current();
    assertFalse(store.reload(), "unchanged file: nothing to do");
    Files.writeString(f, TWO);
    assertTrue(store.reload());
    assertEquals(List.of("a", "b"), store.current().ruleNames());
    assertEquals(
        List.of("a"), before.ruleNames(), "a policy in use is never changed under a request");
    assertNull(store.lastError());
  }

  @Test
  void reload_invalidFileKeepsTheLastGoodPolicy() throws Exception {
    Path f = Files.writeString(dir.resolve("p.yaml"), ONE);
    PolicyStore store = store(f);
    Files.writeString(f, "rules:\n  - {name: a, description: d, effect: alow}\n");
    assertFalse(store.reload());
    assertEquals(List.of("a"), store.current().ruleNames());
    assertTrue(
        store.lastError().contains("p.yaml:2: rule 'a': effect: must be"), store.lastError());
    Files.delete(f);
    assertFalse(store.reload());
    assertEquals(List.of("a"), store.current().ruleNames());
    Files.writeString(f, TWO);
    assertTrue(store.reload());
    assertEquals(List.of("a", "b"), store.current().ruleNames());
  }

  @Test
  void start_invalidFileIsRefused() throws Exception {
    Path f = Files.writeString(dir.resolve("p.yaml"), "rules: 3\n");
    PolicyException e = assertThrows(PolicyException.class, () -> store(f));
    assertTrue(e.getMessage().contains("p.yaml:1: rules: must be a list, got "), e.getMessage());
  }
}
