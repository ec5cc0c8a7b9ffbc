package io.sparkgate.compat;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;

/**
 * Judges a client's {@link Outcome}: a working scenario passes on {@code pass}; a refusal scenario passes only
 * when the client showed the refusing rule ({@code rule '<name>'}) and that rule's remedy, with neither {@code
 * INTERNAL_ERROR} nor {@code Cannot find main error class} (what clients print when they cannot decode an
 * error). The remedy is read from the policy file, so a reworded message needs no change here.
 */
final class Verdict {

  enum Status {
    PASS,
    FAIL,
    /** The client has no such API: neither a pass nor a failure. */
    UNSUPPORTED
  }

  record Judgement(Status status, String reason) {
    boolean failed() {
      return status == Status.FAIL;
    }
  }

  static final List<String> FORBIDDEN = List.of("INTERNAL_ERROR", "Cannot find main error class");

  private static final Pattern SENTENCE_END = Pattern.compile("(?<=\\.)\\s+");
  private static final Pattern PLACEHOLDER = Pattern.compile("\\{[^}]*}");

  private final Map<String, String> remedies;

  private Verdict(Map<String, String> remedies) {
    this.remedies = Map.copyOf(remedies);
  }

  /** Reads every rule's remedy from a policy file (policies/shared-server.yaml). */
  static Verdict forPolicy(Path policyFile) throws IOException {
    Map<String, String> remedies = new HashMap<>();
    try (Reader in = Files.newBufferedReader(policyFile)) {
      Map<String, Object> policy = new Yaml().load(in);
      Object rules = policy.get("rules");
      if (!(rules instanceof List<?> list)) {
        throw new IllegalArgumentException(policyFile + ": no rules list");
      }
      for (Object rule : list) {
        if (rule instanceof Map<?, ?> map
            && map.get("name") != null
            && map.get("message") != null) {
          remedies.put(map.get("name").toString(), remedy(map.get("message").toString()));
        }
      }
    }
    return new Verdict(remedies);
  }

  /**
   * The remedy part of a rule's message: its last sentence without a placeholder ("Use built-in functions
   * ... instead, or run the code on a dedicated cluster."), which is what tells a user what to do; for a
   * message without one, its longest fixed text between placeholders.
   */
  static String remedy(String message) {
    String[] sentences = SENTENCE_END.split(message.strip());
    for (int i = sentences.length - 1; i >= 0; i--) {
      if (!sentences[i].contains("{") && sentences[i].length() > 10) {
        return sentences[i];
      }
    }
    String longest = "";
    for (String part : PLACEHOLDER.split(message)) {
      if (part.strip().length() > longest.length()) {
        longest = part.strip();
      }
    }
    return longest;
  }

  String remedyOf(String rule) {
    String remedy = remedies.get(rule);
    if (remedy == null) {
      throw new IllegalArgumentException("the policy has no rule '" + rule + "'");
    }
    return remedy;
  }

  Judgement judge(Outcome outcome) {
    Scenario scenario = outcome.scenario();
    String detail = String.valueOf(outcome.detail());
    if ("unsupported".equals(outcome.outcome())) {
      return new Judgement(Status.UNSUPPORTED, detail);
    }
    if (scenario.refusedBy().isEmpty()) {
      return "pass".equals(outcome.outcome())
          ? new Judgement(Status.PASS, "")
          : new Judgement(Status.FAIL, outcome.outcome() + ": " + detail);
    }
    String rule = scenario.refusedBy().get();
    if (!"refused".equals(outcome.outcome())) {
      return new Judgement(Status.FAIL, "not refused (" + outcome.outcome() + "): " + detail);
    }
    for (String forbidden : FORBIDDEN) {
      if (detail.contains(forbidden)) {
        return new Judgement(Status.FAIL, "the client showed '" + forbidden + "': " + detail);
      }
    }
    if (!detail.contains("rule '" + rule + "'")) {
      return new Judgement(Status.FAIL, "no \"rule '" + rule + "'\" in: " + detail);
    }
    String remedy = remedyOf(rule);
    if (!detail.contains(remedy)) {
      return new Judgement(Status.FAIL, "no remedy \"" + remedy + "\" in: " + detail);
    }
    return new Judgement(Status.PASS, "");
  }
}
