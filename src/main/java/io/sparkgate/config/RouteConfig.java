package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** One entry of {@code routes}: whom it takes ({@link MatchConfig#ANYONE} without match) and to which pool. */
public record RouteConfig(MatchConfig match, String pool) {

  static List<RouteConfig> readAll(YamlNode root, Set<String> pools) {
    List<RouteConfig> out = new ArrayList<>();
    for (YamlNode node : root.sectionList("routes")) {
      node.allowOnly("match", "pool");
      String pool = node.requiredString("pool", "the pool this route sends to");
      if (!pools.contains(pool)) {
        throw node.errorAt("pool", "names no pool (pools: " + String.join(", ", pools) + ")");
      }
      MatchConfig match =
          node.has("match") ? MatchConfig.read(node.section("match")) : MatchConfig.ANYONE;
      if (!out.isEmpty() && out.get(out.size() - 1).match().anyone()) {
        throw node.error(
            "comes after a route without match, which takes everyone: it never applies");
      }
      out.add(new RouteConfig(match, pool));
    }
    return List.copyOf(out);
  }
}
