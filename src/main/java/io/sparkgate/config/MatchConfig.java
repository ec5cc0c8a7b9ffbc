package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.util.List;

/**
 * Whom a route or a quota override applies to ({@code match:}): {@link Glob} patterns over the verified
 * principal's name, its groups and its tenant, matched exactly (case as the identity provider states it), and
 * over the {@code :authority} (the host the client dialled), in any case. Every list that is set must match;
 * an empty match takes everyone. {@code io.sparkgate.call.MatchBlock} is the one place that reads it.
 */
public record MatchConfig(
    List<String> principals, List<String> groups, List<String> tenants, List<String> authority) {

  public static final MatchConfig ANYONE =
      new MatchConfig(List.of(), List.of(), List.of(), List.of());

  public MatchConfig {
    principals = List.copyOf(principals);
    groups = List.copyOf(groups);
    tenants = List.copyOf(tenants);
    authority = List.copyOf(authority);
  }

  public boolean anyone() {
    return principals.isEmpty() && groups.isEmpty() && tenants.isEmpty() && authority.isEmpty();
  }

  static MatchConfig read(YamlNode node) {
    node.allowOnly("principals", "groups", "tenants", "authority");
    MatchConfig m =
        new MatchConfig(
            node.has("principals") ? node.stringOrList("principals") : List.of(),
            node.has("groups") ? node.stringOrList("groups") : List.of(),
            node.has("tenants") ? node.stringOrList("tenants") : List.of(),
            node.has("authority") ? node.stringOrList("authority") : List.of());
    if (m.anyone()) {
      throw node.error("is empty: name principals, groups, tenants or authority (or drop match)");
    }
    return m;
  }
}
