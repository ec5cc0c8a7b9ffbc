package io.sparkgate.admin;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this proxy should get new clients: every check passes. Components add their checks at start; {@link
 * #evaluate} runs them all (each is a read of state the component keeps, never a call out), and changes are
 * logged once, not on every probe.
 */
public final class Readiness {
  private static final Logger log = LoggerFactory.getLogger(Readiness.class);

  /** One check's outcome; {@code detail} says what fails, never a secret or a request's content. */
  public record Check(String name, boolean ok, String detail) {}

  /** Every check, in the order they were added. */
  public record Report(boolean ready, List<Check> checks) {
    /** The failing checks, one line each. */
    public String failing() {
      return checks.stream()
          .filter(c -> !c.ok())
          .map(c -> c.name() + ": " + c.detail())
          .reduce((a, b) -> a + "; " + b)
          .orElse("");
    }
  }

  private final Map<String, Supplier<Optional<String>>> checks = new LinkedHashMap<>();
  private final Map<String, Supplier<String>> notes = new LinkedHashMap<>();
  private volatile boolean draining;

  @GuardedBy("this")
  private String lastFailing = null; // null before the first evaluation

  /**
   * Adds a check: {@code problem} returns what is wrong, or empty when all is well.
   *
   * @throws IllegalArgumentException when a check of that name exists
   */
  public synchronized Readiness add(String name, Supplier<Optional<String>> problem) {
    if (notes.containsKey(name) || checks.putIfAbsent(name, problem) != null) {
      throw new IllegalArgumentException("two readiness checks named " + name);
    }
    return this;
  }

  /**
   * Adds a fact an operator should see beside the checks (it always passes): a setting that is easy to
   * forget, such as anonymous callers let in beside tokens.
   */
  public synchronized Readiness note(String name, String detail) {
    return note(name, () -> detail);
  }

  /** As above, with a detail read at each evaluation (how DNS discovery fares: never failing readiness). */
  public synchronized Readiness note(String name, Supplier<String> detail) {
    if (checks.containsKey(name) || notes.putIfAbsent(name, detail) != null) {
      throw new IllegalArgumentException("two readiness checks named " + name);
    }
    return this;
  }

  /** From now on, not ready: the proxy is stopping and load balancers should send clients elsewhere. */
  public void drain() {
    draining = true;
  }

  public synchronized Report evaluate() {
    List<Check> results = new ArrayList<>();
    results.add(
        new Check(
            "listening", !draining, draining ? "draining: the proxy is stopping" : "serving"));
    for (var e : checks.entrySet()) {
      Optional<String> problem;
      try {
        problem = e.getValue().get();
      } catch (RuntimeException x) {
        log.warn("readiness check {} failed", e.getKey(), x);
        problem = Optional.of("the check itself failed (see the log)");
      }
      results.add(new Check(e.getKey(), problem.isEmpty(), problem.orElse("ok")));
    }
    notes.forEach((name, detail) -> results.add(new Check(name, true, detail.get())));
    Report report = new Report(results.stream().allMatch(Check::ok), List.copyOf(results));
    String failing = report.failing();
    if (!failing.equals(lastFailing)) {
      if (report.ready()) {
        log.info("ready");
      } else {
        log.warn("not ready: {}", failing);
      }
      lastFailing = failing;
    }
    return report;
  }
}
