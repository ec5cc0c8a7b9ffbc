package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.util.List;

/**
 * Whom a route or a quota override applies to ({@code match:}): glob patterns ({@code *} any run of
 * characters, {@code ?} one) over the verified principal's name, its groups, its tenant, and the
 * {@code :authority} (the host the client dialled). Every list that is set must match; an empty match takes
 * everyone.
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
