package io.sparkgate.admin;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkgate.revoke.Revocation;
import io.sparkgate.revoke.Revocations;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kill switch on the admin API: {@code POST /api/principals/{name}/revoke} and {@code
 * /api/tokens/{jti}/revoke} with {@code {"reason": ..., "until": <RFC 3339, optional>}} revoke, {@code DELETE}
 * on the same path restores, {@code GET /api/revocations} lists what is in force and whether anonymous callers
 * are let in. Each change is audited with the operator; a store that cannot keep it answers 503, so that an
 * operator never believes a revocation is in force when it is not.
 */
final class RevocationApi {
  private static final Logger log = LoggerFactory.getLogger(RevocationApi.class);
  private static final String SUFFIX = "/revoke";
  static final int MAX_REASON_CHARS = 500;

  private final Revocations revocations;
  private final String anonymous;
  private final OperatorRecords records;
  private final Clock clock;

  /** @param anonymous {@code off}, {@code only} or {@code fallback}: whether callers without credentials pass */
  RevocationApi(Revocations revocations, String anonymous, OperatorRecords records, Clock clock) {
    this.revocations = revocations;
    this.anonymous = anonymous;
    this.records = records;
    this.clock = clock;
  }

  AdminServer.Routes register(AdminServer.Routes routes) {
    return routes
        .exact("/api/revocations", AdminHandler.getOnly(r -> AdminResponse.json(200, list())))
        .prefix("/api/principals/", r -> change(r, Revocation.Kind.PRINCIPAL, "/api/principals/"))
        .prefix("/api/tokens/", r -> change(r, Revocation.Kind.TOKEN, "/api/tokens/"));
  }

  Map<String, Object> list() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("anonymous", anonymous);
    m.put("kept_in", revocations == null ? "nowhere (revocations are off)" : revocations.keptIn());
    m.put(
        "revoked",
        revocations == null
            ? List.of()
            : revocations.active().stream().map(Revocation::toMap).toList());
    m.put("denied_jti_file_ids", revocations == null ? 0 : revocations.deniedTokens());
    return m;
  }

  private AdminResponse change(AdminRequest r, Revocation.Kind kind, String prefix) {
    String path = r.path();
    if (!path.endsWith(SUFFIX) || path.length() <= prefix.length() + SUFFIX.length()) {
      return AdminResponse.error(
          404, "no such path: " + path + " (use " + prefix + "{name}/revoke)");
    }
    // The name may hold '/' (a SPIFFE ID, say), sent percent-encoded: the path arrives decoded.
    String name = path.substring(prefix.length(), path.length() - SUFFIX.length());
    if (revocations == null) {
      return AdminResponse.error(404, "revocations are not enabled on this proxy");
    }
    return switch (r.method()) {
      case "POST" -> revoke(r, kind, name);
      case "DELETE" -> restore(r, kind, name);
      default ->
          AdminResponse.error(405, "use POST to revoke, DELETE to restore")
              .withHeader("Allow", "POST, DELETE");
    };
  }

  private AdminResponse revoke(AdminRequest r, Revocation.Kind kind, String name) {
    JsonNode body = r.jsonObject().orElse(null);
    if (body == null) {
      return AdminResponse.error(
          400, "send a JSON object: {\"reason\": \"...\", \"until\": \"<RFC 3339, optional>\"}");
    }
    String reason = body.path("reason").asText("").strip();
    if (reason.isEmpty()) {
      return AdminResponse.error(400, "reason is required: say why, for the audit log");
    }
    if (reason.length() > MAX_REASON_CHARS) {
      return AdminResponse.error(400, "reason is " + MAX_REASON_CHARS + " characters at most");
    }
    Optional<Instant> until = Optional.empty();
    JsonNode u = body.path("until");
    if (!u.isMissingNode() && !u.isNull()) {
      try {
        until = Optional.of(OffsetDateTime.parse(u.asText()).toInstant());
      } catch (DateTimeParseException e) {
        return AdminResponse.error(
            400, "until must be an RFC 3339 time with its offset, e.g. 2026-12-31T18:00:00Z");
      }
      if (!until.get().isAfter(clock.instant())) {
        return AdminResponse.error(
            400, "until is in the past: leave it out to revoke until restored");
      }
    }
    Map<String, Object> details = new LinkedHashMap<>();
    if (kind == Revocation.Kind.PRINCIPAL) details.put("principal", name);
    details.put("reason", reason);
    details.put("until", until.map(Instant::toString).orElse(null));
    Revocation done;
    try {
      done =
          revocations.revoke(
              kind,
              name,
              reason,
              until,
              r.operator(),
              kept -> records.write(r.operator(), "revoke", kept.id(), "revoked", details));
    } catch (RuntimeException e) {
      log.warn("revoking {} {} failed", kind.key(), name, e);
      return AdminResponse.error(
          503, "not revoked: " + revocations.keptIn() + " could not keep it; try again");
    }
    return AdminResponse.json(
        200, Map.of("revoked", done.toMap(), "kept_in", revocations.keptIn()));
  }

  private AdminResponse restore(AdminRequest r, Revocation.Kind kind, String name) {
    Optional<Revocation> ended;
    try {
      ended = revocations.restore(kind, name);
    } catch (RuntimeException e) {
      log.warn("restoring {} {} failed", kind.key(), name, e);
      return AdminResponse.error(
          503, "not restored: " + revocations.keptIn() + " could not be changed; try again");
    }
    if (ended.isEmpty()) {
      return AdminResponse.error(404, kind.key() + " '" + name + "' is not revoked");
    }
    Map<String, Object> details = new LinkedHashMap<>();
    if (kind == Revocation.Kind.PRINCIPAL) details.put("principal", name);
    details.put("reason", ended.get().reason());
    records.write(r.operator(), "restore", ended.get().id(), "restored", details);
    return AdminResponse.json(200, Map.of("restored", ended.get().toMap()));
  }
}
