package io.sparkgate.audit;

import io.grpc.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

  /** Sized for a record's twenty-odd fields: the default sixteen slots were rehashed on every call. */
  private final Map<String, Object> fields = new LinkedHashMap<>(64);
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
      fields.put(field, value);
    }
  }

  /**
   * Sets a field whose value the audit writer computes, off the thread serving the call: {@code value} must
   * only read what no longer changes. A later {@link #put} replaces it.
   */
  public synchronized void putLater(String field, Supplier<?> value) {
    if (accepts(value)) {
      fields.put(field, new Later(value));
    }
  }

  private record Later(Supplier<?> value) {}

  /** Sets a field only if no stage set it yet (the first request message wins). */
  public synchronized void putIfAbsent(String field, Object value) {
    if (accepts(value)) {
      fields.putIfAbsent(field, value);
    }
  }

  /** Appends to a list field, e.g. shadow decisions or rewrites. */
  @SuppressWarnings("unchecked")
  public synchronized void add(String field, Object value) {
    if (accepts(value)) {
      ((List<Object>) fields.computeIfAbsent(field, k -> new ArrayList<>())).add(value);
    }
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
    return resolve(fields.get(field));
  }

  /** Each field in the order first set, as the record shows it (lists copied, deferred values computed). */
  synchronized void forEachField(BiConsumer<String, Object> into) {
    for (Map.Entry<String, Object> e : fields.entrySet()) {
      into.accept(e.getKey(), e.getValue() instanceof List<?> list ? List.copyOf(list) : resolve(e.getValue()));
    }
  }

  private static Object resolve(Object value) {
    return value instanceof Later later ? later.value().get() : value;
  }
}
