package io.sparkgate.opa;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.sparkgate.config.SecretPatterns;
import io.sparkgate.grants.Access;
import io.sparkgate.grants.Accesses;
import io.sparkgate.grants.Verdict;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Fact;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The input document OPA decides on, version {@value #VERSION} ({@code policies/opa/input.schema.json}; a
 * change that removes or renames a field is a new version). Built as maps and written as canonical JSON (keys
 * sorted, no spaces), so equal questions give equal bytes: the decision cache's key.
 */
public final class InputDocument {
  /** {@code input.version}; Rego can refuse a version it was not written for. */
  public static final int VERSION = 1;

  private static final ObjectMapper CANONICAL =
      new ObjectMapper().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

  private final Redaction redaction;

  /**
   * @param includeLiterals whether SQL and expression texts keep their literals ({@code
   *     audit.include_literals})
   * @param secrets the settings and options whose values OPA never sees
   */
  public InputDocument(boolean includeLiterals, SecretPatterns secrets) {
    this.redaction = new Redaction(includeLiterals, secrets);
  }

  /** The document for {@code q}, as maps and lists of strings, numbers and booleans. */
  public Map<String, Object> document(Question q) {
    Map<String, Object> in = new LinkedHashMap<>();
    in.put("version", VERSION);
    Map<String, Object> principal = new LinkedHashMap<>();
    principal.put("name", q.principal());
    principal.put("groups", q.groups());
    principal.put("tenant", q.tenant().orElse(null));
    principal.put("authenticated_by", q.authenticatedBy());
    in.put("principal", principal);
    in.put("rpc", q.rpc());
    in.put("pool", q.pool());
    in.put("backend", backend(q.profile()));
    List<String> secretValues = redaction.secretValues(q.facts());
    List<Map<String, Object>> facts = new ArrayList<>(q.facts().size());
    for (Fact f : q.facts().all()) {
      Map<String, Object> fact = new LinkedHashMap<>();
      fact.put("kind", f.kind().name());
      fact.put("subkind", f.subkind());
      fact.put("attributes", redaction.attributes(f, secretValues));
      facts.add(fact);
    }
    in.put("facts", facts);
    data(q, in);
    Map<String, Object> local = new LinkedHashMap<>();
    local.put("effect", q.localEffect());
    local.put("rule", q.localRule());
    in.put("local", local);
    return in;
  }

  /** {@code {"input": document}} as canonical JSON: what is POSTed, and what the cache is keyed by. */
  public byte[] request(Question q) {
    try {
      return CANONICAL.writeValueAsBytes(Map.of("input", document(q)));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("the input document holds only maps, lists and scalars", e);
    }
  }

  private static Map<String, Object> backend(BackendProfile p) {
    Map<String, Object> b = new LinkedHashMap<>();
    boolean known = p != null;
    b.put("known", known);
    BackendProfile profile = known ? p : BackendProfile.UNKNOWN;
    b.put("spark_version", profile.sparkVersion());
    b.put("extensions", profile.extensions());
    b.put("catalogs", new TreeMap<>(profile.catalogs()));
    b.put("default_catalog", profile.defaultCatalog());
    b.put("default_fs", profile.defaultFs());
    return b;
  }

  /**
   * Each access to data with the privilege it needs, as the grants read them from the facts, and the grant
   * that allowed it when the policy has grants; what could not be resolved with certainty, beside.
   */
  private static void data(Question q, Map<String, Object> in) {
    Accesses accesses = Accesses.of(q.facts());
    Map<Access, String> grants = new HashMap<>();
    if (q.verdict() != null) {
      for (Verdict.Granted g : q.verdict().granted()) grants.put(g.access(), g.grant());
    }
    List<Map<String, Object>> data = new ArrayList<>(accesses.accesses().size());
    for (Access a : accesses.accesses()) {
      Map<String, Object> d = new LinkedHashMap<>();
      d.put("target", a.target().name().toLowerCase(Locale.ROOT));
      d.put("catalog", a.catalog());
      d.put("namespace", a.namespace());
      d.put("name", Redaction.withoutUserInfo(a.name()));
      d.put("qualified", Redaction.withoutUserInfo(a.qualified()));
      d.put("privilege", a.privilege().label());
      d.put("alternative", a.alternative());
      d.put("grant", grants.get(a));
      data.add(d);
    }
    in.put("data", data);
    in.put("data_unresolved", accesses.unresolved());
  }
}
