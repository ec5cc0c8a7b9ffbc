package io.sparkgate.policy;

import io.sparkgate.call.Principal;
import io.sparkgate.inspect.Facts;
import io.sparkgate.testing.YamlText;
import java.io.StringReader;
import java.util.List;
import java.util.Set;

/**
 * Whether a policy rule whose match names these principals, groups and tenants applies to a principal, asked
 * of a policy compiled from text by the real {@link PolicyCompiler}, for other packages' tests.
 */
public final class PolicyProbe {
  private PolicyProbe() {}

  public static boolean takes(
      List<String> principals, List<String> groups, List<String> tenants, Principal who) {
    StringBuilder match = new StringBuilder();
    key(match, "principal", principals);
    key(match, "groups", groups);
    key(match, "tenant", tenants);
    String text =
        "default: allow\n"
            + "rules:\n"
            + "  - name: probe\n"
            + "    description: refuses whom its match takes\n"
            + "    effect: deny\n"
            + (match.length() == 0 ? "" : "    match:\n" + match);
    Policy policy =
        new PolicyCompiler(Effect.ALLOW, Set.of()).compile("probe.yaml", new StringReader(text));
    EvalInput in =
        new EvalInput(
            "ExecutePlan", who.name(), who.groups(), who.tenant().orElse(""), Facts.empty(), null);
    return policy.evaluate(in).refused();
  }

  /** One key of the match, its globs as YAML double-quoted strings. */
  private static void key(StringBuilder out, String key, List<String> globs) {
    if (globs.isEmpty()) return;
    out.append("      ").append(key).append(": ").append(YamlText.flowList(globs)).append('\n');
  }
}
