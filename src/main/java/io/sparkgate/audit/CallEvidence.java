package io.sparkgate.audit;

import io.grpc.Context;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * What the proxy's stages learn about one call (who called, what the request holds, what was decided),
 * gathered for the call's audit record. One per call, found through gRPC's {@link Context} while the call
 * starts, when stages build their per-call state and keep it; thread-safe, because requests and responses are
 * handled on different threads.
 */
public final class CallEvidence {
  static final Context.Key<CallEvidence> KEY = Context.key("sparkgate-call-evidence");

  /** Evidence of a call made outside the proxy's server (tests, the CLI): recorded nowhere. */
  private static final CallEvidence DETACHED = new CallEvidence();

  /** Room for a record's twenty-odd fields without growing. */
  private static final int INITIAL_FIELDS = 32;

  /**
   * Every put in order, as (field, value) pairs: appending costs the serving thread no hashing and no map
   * node, and the writer folds the pairs into the record's fields ({@link #compact}). Lookups scan, and
   * only rare stages look anything up.
   */
  private String[] names = new String[INITIAL_FIELDS]; // guarded by this
  private Object[] values = new Object[INITIAL_FIELDS]; // guarded by this
  private int size; // guarded by this
  private boolean sealed; // guarded by this

  CallEvidence() {}

  /**
   * The evidence of the call being started (in an interceptor, or as a call's hooks are built); outside that,
   * including in the call's later callbacks, evidence that is recorded nowhere.
   */
  public static CallEvidence current() {
    CallEvidence evidence = KEY.get();
    return evidence == null ? DETACHED : evidence;
  }

  /** Sets one field of the audit record (a later value replaces an earlier one). */
  public synchronized void put(String field, Object value) {
    if (accepts(value)) {
      append(field, value);
    }
  }

  /**
   * Sets a field whose value the audit writer computes, off the thread serving the call: {@code value} must
   * only read what no longer changes. A later {@link #put} replaces it.
   */
  public synchronized void putLater(String field, Supplier<?> value) {
    if (accepts(value)) {
      append(field, new Later(value));
    }
  }

  private record Later(Supplier<?> value) {}

  /** Sets a field only if no stage set it yet (the first request message wins). */
  public synchronized void putIfAbsent(String field, Object value) {
    if (accepts(value) && indexOf(field) < 0) {
      append(field, value);
    }
  }

  /**
   * Appends to a list field, e.g. shadow decisions or rewrites; a value the list already holds is not added
   * again, so a long stream whose every message matches the same rules keeps one entry per rule.
   */
  public synchronized void add(String field, Object value) {
    if (!accepts(value)) {
      return;
    }
    int i = indexOf(field);
    if (i >= 0 && values[i] instanceof Items items) {
      if (!items.list().contains(value)) {
        items.list().add(value);
      }
    } else {
      List<Object> list = new ArrayList<>();
      list.add(value);
      append(field, new Items(list));
    }
  }

  /** A list field's items, told apart from a list that a stage put as a value. */
  private record Items(List<Object> list) {}

  private void append(String field, Object value) { // guarded by this
    if (size == names.length) {
      // A long stream sets the same fields for every message: fold them before growing, so the pairs stay
      // as many as the distinct fields, and grow only when most of them are.
      compact();
      if (size > names.length * 3 / 4) {
        names = Arrays.copyOf(names, names.length * 2);
        values = Arrays.copyOf(values, values.length * 2);
      }
    }
    names[size] = field;
    values[size] = value;
    size++;
  }

  /** Each field once, where first set, with its latest value. */
  private void compact() { // guarded by this
    int kept = 0;
    for (int i = 0; i < size; i++) {
      int at = 0;
      while (at < kept && !names[at].equals(names[i])) {
        at++;
      }
      if (at == kept) {
        names[kept++] = names[i];
      }
      values[at] = values[i];
    }
    Arrays.fill(names, kept, size, null);
    Arrays.fill(values, kept, size, null);
    size = kept;
  }

  /** Pairs the evidence has room for (tests: a long stream must not grow it). */
  synchronized int slots() {
    return names.length;
  }

  /** The latest pair that set {@code field}, or -1. */
  private int indexOf(String field) { // guarded by this
    for (int i = size - 1; i >= 0; i--) {
      if (names[i].equals(field)) {
        return i;
      }
    }
    return -1;
  }

  /** Whether a value may be recorded: not for detached evidence, nor null, nor once the call ended. */
  private boolean accepts(Object value) { // guarded by this
    return this != DETACHED && value != null && !sealed;
  }

  /** The call has ended and its record is queued: later evidence is ignored, so the record is what it was. */
  synchronized void seal() {
    sealed = true;
  }

  synchronized Object get(String field) {
    int i = indexOf(field);
    return i < 0 ? null : resolve(values[i]);
  }

  /**
   * Each field in the order first set, with its latest value, as the record shows it (lists copied, deferred
   * values computed). On the audit writer's thread.
   */
  synchronized void forEachField(BiConsumer<String, Object> into) {
    compact();
    for (int i = 0; i < size; i++) {
      into.accept(names[i], resolve(values[i]));
    }
  }

  private static Object resolve(Object value) {
    if (value instanceof Items items) {
      return List.copyOf(items.list());
    }
    return value instanceof Later later ? later.value().get() : value;
  }
}
