package io.sparkgate.grants;

import io.sparkgate.call.MatchBlock;
import io.sparkgate.config.Glob;
import io.sparkgate.yaml.YamlNode;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Reads a policy's {@code data_access} section; any mistake is an error naming the file, line and grant. */
public final class DataAccessReader {
  private DataAccessReader() {}

  /** Grants from {@code node}; {@code ruleNames} are the policy's rules (a grant may not share a name). */
  public static DataAccess read(YamlNode node, Set<String> ruleNames) {
    Map<String, YamlNode> m = node.allowOnly("default", "mode", "grants").entries();
    if (!m.containsKey("default")) {
      throw node.error("'default' is required: deny (every table and path needs a grant) or allow");
    }
    String def = m.get("default").text();
    if (!def.equals("deny") && !def.equals("allow")) {
      throw m.get("default").error("must be deny or allow, got '" + def + "'");
    }
    boolean shadow = false;
    if (m.containsKey("mode")) {
      String mode = m.get("mode").text();
      if (mode.equals("shadow")) shadow = true;
      else if (!mode.equals("enforce"))
        throw m.get("mode").error("must be enforce or shadow, got '" + mode + "'");
    }
    List<Grant> grants = new ArrayList<>();
    ItemNames names = new ItemNames("grant");
    if (m.containsKey("grants")) {
      for (YamlNode item : m.get("grants").items()) {
        ItemNames.Named named =
            names.read(item, grants.size(), "description", "to", "tables", "paths", "privileges");
        grants.add(grant(named, grants.size()));
        names.claim(named);
        if (ruleNames.contains(named.name())) {
          throw named
              .node()
              .error("a rule already has this name; refusals cite both, so they must differ");
        }
      }
    }
    return new DataAccess(true, def.equals("deny"), shadow, grants);
  }

  private static Grant grant(ItemNames.Named item, int index) {
    String name = item.name();
    YamlNode where = item.node();
    Map<String, YamlNode> m = item.keys();
    if (!m.containsKey("to")) {
      throw where.error("'to' is required: {principals: [...], groups: [...], tenants: [...]}");
    }
    YamlNode to = m.get("to");
    Map<String, YamlNode> who = to.allowOnly("principals", "groups", "tenants").entries();
    if (who.isEmpty()) {
      throw to.error(
          "names no one: set principals, groups or tenants (principals: ['*'] for everyone)");
    }
    MatchBlock block =
        MatchBlock.identities(
            identities(who.get("principals")),
            identities(who.get("groups")),
            identities(who.get("tenants")));
    List<TablePattern> tables = new ArrayList<>();
    if (m.containsKey("tables")) {
      for (YamlNode t : m.get("tables").items()) {
        try {
          tables.add(TablePattern.parse(t.text()));
        } catch (IllegalArgumentException e) {
          throw t.error(e.getMessage());
        }
      }
    }
    List<String> pathTexts = new ArrayList<>();
    List<Glob> paths = new ArrayList<>();
    if (m.containsKey("paths")) {
      for (YamlNode p : m.get("paths").items()) {
        String text = p.text();
        if (text.indexOf('?') >= 0 || text.contains(TablePattern.PRINCIPAL)) {
          throw p.error("a path glob takes '*' only (no '?' or placeholder): " + text);
        }
        if (!text.contains("://")) {
          throw p.error(
              "'" + text + "' needs a scheme (s3a://bucket/*, hdfs://nn/data/*, file:///data/*)");
        }
        pathTexts.add(text);
        paths.add(Glob.exact(text));
      }
    }
    if (tables.isEmpty() && paths.isEmpty()) {
      throw where.error("grants nothing: set tables, paths or both");
    }
    if (!m.containsKey("privileges")) {
      throw where.error(
          "'privileges' is required (select, modify, create, alter, drop, maintain, all)");
    }
    Set<Privilege> privileges = EnumSet.noneOf(Privilege.class);
    for (YamlNode p : m.get("privileges").items()) {
      Set<Privilege> named = Privilege.parse(p.text());
      if (named == null) {
        throw p.error(
            "unknown privilege '"
                + p.text()
                + "' (select, modify, create, alter, drop, maintain, all)");
      }
      privileges.addAll(named);
    }
    if (privileges.isEmpty()) throw m.get("privileges").error("must not be empty");
    return new Grant(index, name, block, describe(who), tables, pathTexts, paths, privileges);
  }

  /** {@code groups [finance]; principals [alice]}: whom a grant's {@code to:} names, for listings. */
  private static String describe(Map<String, YamlNode> who) {
    List<String> parts = new ArrayList<>();
    for (String key : List.of("principals", "groups", "tenants")) {
      if (who.containsKey(key)) parts.add(key + " " + who.get(key).strings());
    }
    return String.join("; ", parts);
  }

  /** A list of exact identity globs, as in routes; no regex. */
  private static List<String> identities(YamlNode node) {
    if (node == null) return List.of();
    if (node.isMapping()
        || node.isSequence() && node.items().stream().anyMatch(YamlNode::isMapping)) {
      throw node.error(
          "takes globs of identities, matched exactly as in routes; not a {regex: ...}");
    }
    List<String> out = node.strings();
    if (out.isEmpty()) throw node.error("must not be empty");
    return out;
  }
}
