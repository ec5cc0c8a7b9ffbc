package io.sparkgate;

import io.sparkgate.admin.AdminApi;
import io.sparkgate.admin.AdminHandler;
import io.sparkgate.admin.AdminResponse;
import io.sparkgate.admin.AdminServer;
import io.sparkgate.admin.EngineControl;
import io.sparkgate.admin.Readiness;
import io.sparkgate.audit.AuditLog;
import io.sparkgate.config.AdminConfig;
import io.sparkgate.forward.Backends;
import io.sparkgate.live.LiveCalls;
import io.sparkgate.metrics.ProxyMetrics;
import io.sparkgate.policy.Policy;
import io.sparkgate.policy.PolicyStage;
import io.sparkgate.policy.PolicyStore;
import io.sparkgate.revoke.Revocations;
import io.sparkgate.route.Router;
import java.io.IOException;
import java.time.Clock;
import java.util.Map;

/** What the admin listener serves, joined to the parts of a running proxy it shows and acts on. */
final class AdminListener {
  private AdminListener() {}

  /** Starts the admin listener: probes, the scrape, the admin API and the console. */
  static AdminServer start(
      AdminConfig config,
      Readiness readiness,
      ProxyMetrics metrics,
      LiveCalls live,
      Router router,
      Map<String, PolicyStage> policies,
      AuditLog auditLog,
      Backends backends,
      Revocations revocations,
      EngineControl engines,
      String anonymous)
      throws IOException {
    AdminApi api =
        adminApi(live, router, policies, auditLog, backends, revocations, engines, anonymous);
    // Wherever a principal is revoked, what it runs through this replica is stopped here.
    if (revocations != null) revocations.onRevoked(api::sweep);
    return AdminServer.start(config, api.register(adminRoutes(config, readiness, metrics)));
  }

  /** What the admin listener serves: probes, the scrape, and (with them) the admin API and console. */
  private static AdminServer.Routes adminRoutes(
      AdminConfig admin, Readiness readiness, ProxyMetrics metrics) {
    return new AdminServer.Routes()
        .open("/healthz", AdminHandler.getOnly(r -> AdminResponse.text(200, "ok\n")))
        .open(
            "/readyz",
            AdminHandler.getOnly(
                r -> {
                  Readiness.Report report = readiness.evaluate();
                  return AdminResponse.json(report.ready() ? 200 : 503, report);
                }))
        .exact(
            admin.metricsPath(),
            AdminHandler.getOnly(
                r ->
                    new AdminResponse(
                        200,
                        "text/plain; version=0.0.4; charset=utf-8",
                        metrics.scrape().getBytes(java.nio.charset.StandardCharsets.UTF_8))));
  }

  /** The admin API's views of this proxy: read-only, but for the two operator actions. */
  private static AdminApi adminApi(
      LiveCalls live,
      Router router,
      Map<String, PolicyStage> policies,
      AuditLog auditLog,
      Backends backends,
      Revocations revocations,
      EngineControl engines,
      String anonymous) {
    return new AdminApi(
        new AdminApi.Views(
            live,
            router::backendsByPool,
            () ->
                policies.entrySet().stream()
                    .map(
                        e -> {
                          PolicyStore store = e.getValue().store();
                          Policy p = store.current();
                          return new AdminApi.PoolPolicy(
                              e.getKey(),
                              p.files(),
                              p.ruleNames(),
                              p.defaultEffect().name().toLowerCase(java.util.Locale.ROOT),
                              store.reloads(),
                              store.rejected(),
                              store.loadedAt(),
                              store.lastError());
                        })
                    .toList(),
            policies.isEmpty()
                ? null
                : (pool, sql, method, request, principal, groups) -> {
                  PolicyStage p = policies.get(pool);
                  return p == null ? null : p.explain(sql, method, request, principal, groups);
                },
            policies.isEmpty()
                ? null
                : pool -> {
                  PolicyStage p = policies.get(pool);
                  return p == null ? null : p.store().current().dataAccess();
                },
            AdminApi.Actions.overSparkConnect(backends::channel),
            router::forget,
            auditLog == null ? null : auditLog::write,
            Clock.systemUTC(),
            revocations,
            anonymous),
        engines);
  }
}
