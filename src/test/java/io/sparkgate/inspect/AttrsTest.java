package io.sparkgate.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class AttrsTest {
  @Test
  void copyOf_sortsByName_andBehavesAsTheSameSortedMap() {
    Map<String, String> given = new HashMap<>();
    for (String name :
        List.of("where", "table", "catalog", "name", "z", "a_start", "a_end", "database")) {
      given.put(name, "v-" + name);
    }
    Attrs attrs = Attrs.copyOf(given);
    TreeMap<String, String> expected = new TreeMap<>(given);

    assertEquals(List.copyOf(expected.keySet()), List.copyOf(attrs.keySet()));
    assertEquals(expected, attrs);
    assertEquals(attrs, expected);
    assertEquals(expected.hashCode(), attrs.hashCode());
    assertEquals("v-table", attrs.get("table"));
    assertNull(attrs.get("missing"));
    Object notAName = 42; // Map.get takes any object: a key of another type is absent, not an error
    assertNull(attrs.get(notAName));
    assertTrue(attrs.containsKey("a_end"));
    assertFalse(attrs.containsKey("b"));
    List<String> seen = new ArrayList<>();
    attrs.forEach((k, v) -> seen.add(k + "=" + v));
    assertEquals(
        expected.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList(), seen);
    assertSame(attrs, Attrs.copyOf(attrs));
    assertSame(Attrs.EMPTY, Attrs.copyOf(Map.of()));
  }

  @Test
  void attrs_areImmutable_andNamesMustNotBeNull() {
    Attrs attrs = Attrs.copyOf(Map.of("a", "1"));
    assertThrows(UnsupportedOperationException.class, () -> attrs.put("b", "2"));
    assertThrows(
        UnsupportedOperationException.class,
        () -> attrs.entrySet().iterator().next().setValue("x"));
    Map<String, String> withNull = new HashMap<>();
    withNull.put(null, "x");
    assertThrows(NullPointerException.class, () -> Attrs.copyOf(withNull));
  }

  @Test
  void builder_keepsTheLastValueOfAName_sortsOnEmit_andIsDoneAfter() {
    FactSink sink = new FactSink(10);
    FactSink.Builder b =
        sink.fact(Fact.Kind.TABLE_READ, "")
            .put("where", "plan.root")
            .put("table", "t1")
            .put("absent", null)
            .put("table", "t2");
    for (int i = 9; i >= 0; i--) {
      b.put("k" + i, i); // grows past the builder's first arrays
    }
    b.emit();

    Fact fact = sink.build().all().get(0);
    assertEquals("t2", fact.get("table"));
    assertNull(fact.get("absent"));
    assertEquals(12, fact.attrs().size());
    assertEquals(
        List.copyOf(new TreeMap<>(fact.attrs()).keySet()), List.copyOf(fact.attrs().keySet()));
    assertThrows(IllegalStateException.class, () -> b.put("late", "x"));
    assertThrows(IllegalStateException.class, b::emit);
  }
}
