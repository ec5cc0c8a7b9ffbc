package io.sparkgate.admin;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The engines' part of the admin API: {@code GET /api/engines} lists every replica's engines, and {@code POST
 * /api/engines/{pool}/{key}/stop} stops one (its sessions released first), audited with the operator.
 */
final class EngineApi {
  private static final String PREFIX = "/api/engines/";
  private static final String SUFFIX = "/stop";

  private final EngineControl engines; // null: no pool of engines
  private final OperatorRecords records;

  EngineApi(EngineControl engines, OperatorRecords records) {
    this.engines = engines;
    this.records = records;
  }

  AdminServer.Routes register(AdminServer.Routes routes) {
    return routes
        .exact("/api/engines", AdminHandler.getOnly(r -> AdminResponse.json(200, list())))
        .prefix(PREFIX, this::stop);
  }

  private Map<String, Object> list() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("engines", engines == null ? List.of() : engines.list());
    return m;
  }

  private AdminResponse stop(AdminRequest r) {
    if (!r.method().equals("POST")) {
      return AdminResponse.error(405, "use POST").withHeader("Allow", "POST");
    }
    String path = r.path();
    int slash = path.indexOf('/', PREFIX.length());
    if (!path.endsWith(SUFFIX) || slash < 0 || slash + 1 >= path.length() - SUFFIX.length()) {
      return AdminResponse.error(
          404, "no such path: " + path + " (use " + PREFIX + "{pool}/{key}/stop)");
    }
    String pool = path.substring(PREFIX.length(), slash);
    // The key may hold '/' (a SPIFFE ID, say), sent percent-encoded: the path arrives decoded.
    String key = path.substring(slash + 1, path.length() - SUFFIX.length());
    if (engines == null) return AdminResponse.error(404, "this proxy has no pool of engines");
    boolean stopped = engines.stop(pool, key, r.operator());
    records.write(
        r.operator(),
        "engine-stop",
        "engine:" + pool + "/" + key,
        stopped ? "stopping" : "not owned by this replica",
        Map.of());
    if (!stopped) {
      return AdminResponse.error(
          404,
          "no engine "
              + key
              + " of pool "
              + pool
              + " owned by this replica (GET /api/engines names"
              + " each engine's owner; ask that replica)");
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("pool", pool);
    m.put("key", key);
    m.put("outcome", "stopping");
    return AdminResponse.json(202, m);
  }
}
