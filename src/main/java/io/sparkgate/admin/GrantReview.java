package io.sparkgate.admin;

import io.sparkgate.config.PoolConfig;
import io.sparkgate.grants.Coverage;
import io.sparkgate.grants.DataAccess;
import io.sparkgate.grants.Holding;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@code GET /api/grants/who} and {@code /api/grants/what}: access review over the grants of a pool's policy
 * in force (the default pool unless {@code pool=}), as {@code sparkgate grants who|what} prints them.
 */
final class GrantReview {
  private final Function<String, DataAccess> grants;

  /** @param grants a pool's grants in force; null for a pool without a policy */
  GrantReview(Function<String, DataAccess> grants) {
    this.grants = grants;
  }

  /** {@code ?table=catalog.namespace.name} and/or {@code &path=scheme://...}. */
  AdminResponse who(AdminRequest r) {
    Optional<String> table = r.param("table").filter(t -> !t.isBlank());
    Optional<String> path = r.param("path").filter(p -> !p.isBlank());
    if (table.isEmpty() && path.isEmpty()) {
      return AdminResponse.error(400, "give table=catalog.namespace.name, path=..., or both");
    }
    return withGrants(
        r,
        (pool, g) -> {
          Map<String, Object> m = head(pool, g);
          if (table.isPresent()) {
            m.put("table", table.get());
            m.put("grants", coverage(g.who(table.get())));
          }
          if (path.isPresent()) {
            m.put("path", path.get());
            m.put("path_grants", coverage(g.whoPath(path.get())));
          }
          return m;
        });
  }

  /** {@code ?principal=alice&groups=a,b&tenant=t}. */
  AdminResponse what(AdminRequest r) {
    Optional<String> principal = r.param("principal").filter(p -> !p.isBlank());
    if (principal.isEmpty()) return AdminResponse.error(400, "give principal=<name>");
    List<String> groups =
        Arrays.stream(r.param("groups").orElse("").split(","))
            .map(String::strip)
            .filter(g -> !g.isEmpty())
            .toList();
    Optional<String> tenant = r.param("tenant").filter(t -> !t.isBlank());
    return withGrants(
        r,
        (pool, g) -> {
          Map<String, Object> m = head(pool, g);
          m.put("principal", principal.get());
          m.put("groups", groups);
          m.put("tenant", tenant.orElse(null));
          List<Map<String, Object>> out = new ArrayList<>();
          for (Holding h : g.what(principal.get(), groups, tenant)) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("grant", h.grant());
            e.put("to", h.to());
            e.put("privileges", h.privileges());
            e.put("tables", h.tables());
            e.put("paths", h.paths());
            out.add(e);
          }
          m.put("grants", out);
          return m;
        });
  }

  private interface Query {
    Map<String, Object> answer(String pool, DataAccess grants);
  }

  /** The pool's grants, or the 404 saying why there are none; a malformed name is a 400. */
  private AdminResponse withGrants(AdminRequest r, Query query) {
    if (grants == null) {
      return AdminResponse.error(404, "no policy section in the configuration: no grants");
    }
    String pool = r.param("pool").filter(p -> !p.isBlank()).orElse(PoolConfig.DEFAULT);
    DataAccess g = grants.apply(pool);
    if (g == null) return AdminResponse.error(404, "no pool named '" + pool + "' with a policy");
    if (!g.present()) {
      return AdminResponse.error(
          404, "the policy of pool '" + pool + "' has no data_access section: no grants");
    }
    try {
      return AdminResponse.json(200, query.answer(pool, g));
    } catch (IllegalArgumentException e) {
      return AdminResponse.error(400, e.getMessage());
    }
  }

  private static Map<String, Object> head(String pool, DataAccess g) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("pool", pool);
    m.put("default", g.denyByDefault() ? "deny" : "allow");
    m.put("shadow", g.shadow());
    return m;
  }

  private static List<Map<String, Object>> coverage(List<Coverage> found) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Coverage c : found) {
      Map<String, Object> e = new LinkedHashMap<>();
      e.put("grant", c.grant());
      e.put("to", c.to());
      e.put("privileges", c.privileges());
      e.put("pattern", c.pattern());
      e.put("principal", c.principal().orElse(null));
      out.add(e);
    }
    return out;
  }
}
