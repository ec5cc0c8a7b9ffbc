package io.sparkgate.inspect;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * A fact's attributes: immutable, sorted by name, found by binary search over two arrays. A fact has a handful
 * of attributes and every call makes a few facts; a TreeMap built them as a tree of nodes twice over (the
 * builder's, then the fact's copy), and each lookup chased those nodes through memory that other processes
 * had pushed out of the caches since the last call.
 */
final class Attrs extends AbstractMap<String, String> {
  static final Attrs EMPTY = new Attrs(new String[0], new String[0]);

  private final String[] names;
  private final String[] values;

  private Attrs(String[] names, String[] values) {
    this.names = names;
    this.values = values;
  }

  /** {@code map} as attributes (itself when it already is). Names must not be null; values may be. */
  static Attrs copyOf(Map<String, String> map) {
    if (map instanceof Attrs attrs) {
      return attrs;
    }
    String[] names = new String[map.size()];
    String[] values = new String[names.length];
    int n = 0;
    for (Map.Entry<String, String> e : map.entrySet()) {
      names[n] = Objects.requireNonNull(e.getKey(), "attribute name");
      values[n] = e.getValue();
      n++;
    }
    return sorted(names, values, n);
  }

  /** The first {@code n} pairs, whose names are distinct, sorted in place (the arrays are kept or trimmed). */
  static Attrs sorted(String[] names, String[] values, int n) {
    if (n == 0) {
      return EMPTY;
    }
    // Insertion sort: a fact has few attributes, and builders mostly add them nearly in order.
    for (int i = 1; i < n; i++) {
      String name = names[i];
      String value = values[i];
      int j = i - 1;
      while (j >= 0 && names[j].compareTo(name) > 0) {
        names[j + 1] = names[j];
        values[j + 1] = values[j];
        j--;
      }
      names[j + 1] = name;
      values[j + 1] = value;
    }
    return n == names.length
        ? new Attrs(names, values)
        : new Attrs(Arrays.copyOf(names, n), Arrays.copyOf(values, n));
  }

  private int indexOf(Object name) {
    return name instanceof String s ? Arrays.binarySearch(names, s) : -1;
  }

  @Override
  public String get(Object name) {
    int i = indexOf(name);
    return i < 0 ? null : values[i];
  }

  @Override
  public boolean containsKey(Object name) {
    return indexOf(name) >= 0;
  }

  @Override
  public int size() {
    return names.length;
  }

  @Override
  public void forEach(BiConsumer<? super String, ? super String> action) {
    for (int i = 0; i < names.length; i++) {
      action.accept(names[i], values[i]);
    }
  }

  @Override
  public Set<Map.Entry<String, String>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public int size() {
        return names.length;
      }

      @Override
      public Iterator<Map.Entry<String, String>> iterator() {
        return new Iterator<>() {
          private int next;

          @Override
          public boolean hasNext() {
            return next < names.length;
          }

          @Override
          public Map.Entry<String, String> next() {
            if (next >= names.length) {
              throw new NoSuchElementException();
            }
            int i = next++;
            return new AbstractMap.SimpleImmutableEntry<>(names[i], values[i]);
          }
        };
      }
    };
  }
}
