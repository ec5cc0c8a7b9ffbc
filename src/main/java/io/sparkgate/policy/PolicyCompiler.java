package io.sparkgate.policy;

import io.grpc.Status;
import io.sparkgate.call.MatchBlock;
import io.sparkgate.grants.DataAccess;
import io.sparkgate.grants.DataAccessReader;
import io.sparkgate.grants.ItemNames;
import io.sparkgate.inspect.Fact;
import io.sparkgate.yaml.YamlNode;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Reads a policy file and compiles it into an immutable {@link Policy}. Any mistake rejects the whole file
 * with {@code file:line}, the rule's name and the problem; nothing is half-loaded.
 */
public final class PolicyCompiler {
  private static final String[] RULE_KEYS = {
    "description",
    "effect",
    "mode",
    "match",
    "when",
    "message",
    "status",
    "error_class",
    "sql_state",
    "rewriter"
  };
  private static final Pattern ERROR_CLASS = Pattern.compile("[A-Z][A-Z0-9_]*");
  private static final Pattern SQL_STATE = Pattern.compile("[0-9A-Z]{5}");

  /** Includes may nest (a site policy on a shared base on a common base); this bounds a runaway chain. */
  static final int MAX_INCLUDE_DEPTH = 8;

  private final Effect configDefault;
  private final Set<String> rewriters;

  /**
   * @param configDefault the default effect when the file does not set {@code default}
   * @param rewriters names a {@code rewriter:} may use
   */
  public PolicyCompiler(Effect configDefault, Set<String> rewriters) {
    this.configDefault = configDefault;
    this.rewriters = Set.copyOf(rewriters);
  }

  public Policy compile(Path file) {
    return compile(file.toString(), read(file, null));
  }

  /**
   * Compiles policy text; {@code file} names it in messages and is where its includes are resolved from (its
   * directory), so it should be the path the text came from.
   */
  public Policy compile(String file, Reader text) {
    YamlNode root = parse(file, text);
    Map<String, YamlNode> top = root.allowOnly("default", "rules", "data_access").entries();
    Effect def = configDefault;
    if (top.containsKey("default")) {
      def = effect(top.get("default"));
      if (def != Effect.ALLOW && def != Effect.DENY)
        throw top.get("default").error("must be allow or deny");
    }
    Sources sources = new Sources(Path.of(file));
    List<Rule> rules = rules(root, top, sources);
    DataAccess data =
        top.containsKey("data_access")
            ? DataAccessReader.read(top.get("data_access"), sources.names.names())
            : DataAccess.NONE;
    return new Policy(sources.files, rules, def, data);
  }

  /** A policy or policy test file, whose every error is a PolicyException naming the file and line. */
  static YamlNode parse(String file, Reader text) {
    YamlNode root = YamlNode.parse(file, text, PolicyException::new);
    if (root.isNull()) throw root.error("the file is empty");
    return root;
  }

  /**
   * The rules of one file, included files' spliced in where their {@code - include:} item stands. Rule names
   * are unique across all of them.
   */
  private List<Rule> rules(YamlNode root, Map<String, YamlNode> top, Sources sources) {
    if (!top.containsKey("rules"))
      throw root.error("a policy file needs 'rules' (a list; it may be empty)");
    List<Rule> rules = new ArrayList<>();
    int i = 0;
    for (YamlNode item : top.get("rules").items()) {
      if (item.isMapping() && item.entries().containsKey("include")) {
        YamlNode include = item.allowOnly("include").entries().get("include");
        rules.addAll(included(include, sources));
        i++;
        continue;
      }
      ItemNames.Named named = sources.names.read(item, i++, RULE_KEYS);
      rules.add(rule(named));
      sources.names.claim(named);
    }
    return rules;
  }

  /** The rules of the file an {@code include:} names, relative to the including file's directory. */
  private List<Rule> included(YamlNode include, Sources sources) {
    String name = include.text();
    Path including = Path.of(include.file());
    Path base = including.toAbsolutePath().getParent();
    Path target = base == null ? Path.of(name) : base.resolve(name);
    Path real;
    try {
      real = target.toRealPath();
    } catch (IOException e) {
      throw include.error("cannot include '" + name + "': no readable file at " + target);
    }
    if (sources.including.contains(real)) {
      throw include.error(
          "include cycle: '" + name + "' is already being included (" + sources.including + ")");
    }
    if (!sources.included.add(real)) {
      throw include.error(
          "'" + name + "' is already included elsewhere in this policy; include each file once");
    }
    if (sources.including.size() > MAX_INCLUDE_DEPTH) {
      throw include.error("includes nest deeper than " + MAX_INCLUDE_DEPTH + " files");
    }
    String shown =
        including.getParent() == null ? name : including.getParent().resolve(name).toString();
    YamlNode root = parse(shown, read(target, include));
    // An included file may set its own default (so that it also works on its own); the including
    // file's wins. Grants are the top file's alone: one place says who may read what.
    Map<String, YamlNode> top = root.allowOnly("default", "rules", "data_access").entries();
    if (top.containsKey("data_access")) {
      throw top.get("data_access")
          .error("data_access belongs in the top policy file, not in an included one");
    }
    sources.files.add(shown);
    sources.including.addLast(real);
    try {
      return rules(root, top, sources);
    } finally {
      sources.including.removeLast();
    }
  }

  private static Reader read(Path file, YamlNode includedBy) {
    try {
      return new StringReader(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      String problem = "cannot read: " + e.getMessage();
      if (includedBy != null) throw includedBy.error("cannot include " + file + ": " + problem);
      throw new PolicyException(file + ": " + problem, e);
    }
  }

  /** What one compilation has read so far. */
  private static final class Sources {
    /** Every file the policy was read from, the top one first. */
    final List<String> files = new ArrayList<>();

    /** The files being included, outermost first: a file may not include itself, even indirectly. */
    final Deque<Path> including = new ArrayDeque<>();

    /** Every file included so far: twice would define its rules twice. */
    final Set<Path> included = new HashSet<>();

    /** The rule names, unique across the files. */
    final ItemNames names = new ItemNames("rule");

    Sources(Path top) {
      files.add(top.toString());
      try {
        including.add(top.toRealPath());
      } catch (IOException e) {
        including.add(
            top.toAbsolutePath().normalize()); // text not read from this path (tests, explain)
      }
    }
  }

  private Rule rule(ItemNames.Named named) {
    String name = named.name();
    YamlNode where = named.node();
    Map<String, YamlNode> m = named.keys();
    if (!m.containsKey("description"))
      throw where.error("'description' is required: say why the rule exists");
    String description = m.get("description").text();
    if (!m.containsKey("effect"))
      throw where.error("'effect' is required (deny, allow, audit or rewrite)");
    Effect effect = effect(m.get("effect"));
    boolean shadow = false;
    if (m.containsKey("mode")) {
      String mode = m.get("mode").text();
      if (mode.equals("shadow")) shadow = true;
      else if (!mode.equals("enforce"))
        throw m.get("mode").error("must be enforce or shadow, got '" + mode + "'");
    }
    Match match = m.containsKey("match") ? match(m.get("match")) : Match.ALL;
    Condition when = m.containsKey("when") ? condition(m.get("when")) : null;
    String defaultMessage = effect == Effect.DENY ? "Refused by the Sparkgate policy." : "";
    MessageTemplate message =
        MessageTemplate.compile(
            m.containsKey("message") ? m.get("message").text() : defaultMessage, where);
    Status.Code code = Status.Code.PERMISSION_DENIED;
    if (m.containsKey("status")) {
      String s = m.get("status").text().toUpperCase(Locale.ROOT);
      code =
          switch (s) {
            case "PERMISSION_DENIED" -> Status.Code.PERMISSION_DENIED;
            case "FAILED_PRECONDITION" -> Status.Code.FAILED_PRECONDITION;
            case "INVALID_ARGUMENT" -> Status.Code.INVALID_ARGUMENT;
            case "UNIMPLEMENTED" -> Status.Code.UNIMPLEMENTED;
            default ->
                throw m.get("status")
                    .error(
                        "must be permission_denied, failed_precondition, invalid_argument or unimplemented, got '"
                            + s
                            + "'");
          };
    }
    String errorClass =
        m.containsKey("error_class") ? m.get("error_class").text() : Decision.ERROR_CLASS;
    if (!ERROR_CLASS.matcher(errorClass).matches())
      throw where.errorAt("error_class", "must be UPPER_SNAKE_CASE");
    String sqlState = m.containsKey("sql_state") ? m.get("sql_state").text() : Decision.SQL_STATE;
    if (!SQL_STATE.matcher(sqlState).matches())
      throw where.errorAt("sql_state", "must be 5 characters [0-9A-Z]");
    String rewriter = null;
    if (effect == Effect.REWRITE) {
      if (!m.containsKey("rewriter"))
        throw where.error("effect rewrite needs 'rewriter' (one of " + rewriters + ")");
      rewriter = m.get("rewriter").text();
      if (!rewriters.contains(rewriter)) {
        throw m.get("rewriter")
            .error("unknown rewriter '" + rewriter + "' (known: " + rewriters + ")");
      }
    } else if (m.containsKey("rewriter")) {
      throw m.get("rewriter").error("only goes with effect: rewrite");
    }
    if ((effect == Effect.ALLOW || effect == Effect.AUDIT)
        && (m.containsKey("status") || m.containsKey("error_class"))) {
      throw where.error("status and error_class only apply to deny and rewrite rules");
    }
    return new Rule(
        name,
        description,
        effect,
        shadow,
        match,
        when,
        message,
        code,
        errorClass,
        sqlState,
        rewriter,
        where.line());
  }

  private static Effect effect(YamlNode node) {
    String v = node.text();
    return switch (v) {
      case "deny" -> Effect.DENY;
      case "allow" -> Effect.ALLOW;
      case "audit" -> Effect.AUDIT;
      case "rewrite" -> Effect.REWRITE;
      default -> throw node.error("must be deny, allow, audit or rewrite, got '" + v + "'");
    };
  }

  private Match match(YamlNode node) {
    Map<String, YamlNode> m =
        node.allowOnly("rpc", "principal", "groups", "tenant", "except_groups", "except_principals")
            .entries();
    List<String> exceptPrincipals = identities(m.get("except_principals"));
    List<String> exceptGroups = identities(m.get("except_groups"));
    return new Match(
        strings(m.get("rpc")),
        MatchBlock.identities(
            identities(m.get("principal")),
            identities(m.get("groups")),
            identities(m.get("tenant"))),
        exceptPrincipals.isEmpty()
            ? null
            : MatchBlock.identities(exceptPrincipals, List.of(), List.of()),
        exceptGroups.isEmpty() ? null : MatchBlock.identities(List.of(), exceptGroups, List.of()));
  }

  /**
   * Principals, groups or tenants: a glob or a list of them, matched exactly as a route's or a quota
   * override's are, so no {@code regex}; empty when absent.
   */
  private static List<String> identities(YamlNode node) {
    if (node == null) return List.of();
    boolean mapping =
        node.isMapping()
            || node.isSequence() && node.items().stream().anyMatch(YamlNode::isMapping);
    if (mapping) {
      throw node.error(
          "takes globs of identities, matched exactly as in routes and quotas; not a {regex: ...}");
    }
    return node.strings();
  }

  private static StringMatcher strings(YamlNode node) {
    return node == null ? null : matcher(node);
  }

  /** A glob, a {regex: ...}, or a list of either; globs ignore case. */
  static StringMatcher matcher(YamlNode node) {
    return matcher(node, true);
  }

  /** As above; with {@code ignoreCase} false, globs match case as written (regexes always do). */
  static StringMatcher matcher(YamlNode node, boolean ignoreCase) {
    if (node.isScalar()) return StringMatcher.glob(node.text(), ignoreCase);
    if (node.isMapping()) {
      Map<String, YamlNode> m = node.allowOnly("regex").entries();
      if (!m.containsKey("regex")) throw node.error("a matcher mapping needs 'regex'");
      String re = m.get("regex").text();
      try {
        return StringMatcher.regex(Pattern.compile(re));
      } catch (PatternSyntaxException e) {
        throw m.get("regex").error("invalid regex: " + e.getDescription());
      }
    }
    List<StringMatcher> any = new ArrayList<>();
    for (YamlNode item : node.items()) {
      if (item.isSequence()) throw item.error("nested lists are not allowed");
      any.add(matcher(item, ignoreCase));
    }
    if (any.isEmpty()) throw node.error("must not be an empty list");
    return StringMatcher.anyOf(any, ignoreCase);
  }

  /** A condition mapping, or a list of them (all must hold). */
  Condition condition(YamlNode node) {
    if (node.isSequence()) return new Conditions.All(children(node));
    Map<String, YamlNode> m = node.entries();
    Set<String> keys = m.keySet();
    if (keys.contains("fact")) {
      m = node.allowOnly("fact", "subkind", "subkind_not", "attr", "attr_not").entries();
      Set<Fact.Kind> kinds = EnumSet.noneOf(Fact.Kind.class);
      for (String k : m.get("fact").strings()) {
        try {
          kinds.add(Fact.Kind.valueOf(k));
        } catch (IllegalArgumentException e) {
          throw m.get("fact")
              .error("unknown fact kind '" + k + "' (kinds: " + List.of(Fact.Kind.values()) + ")");
        }
      }
      StringMatcher subkind = strings(m.get("subkind"));
      StringMatcher subkindNot = strings(m.get("subkind_not"));
      return new Conditions.FactCondition(
          kinds, subkind, subkindNot, attrs(m.get("attr")), attrs(m.get("attr_not")));
    }
    if (keys.size() != 1) {
      throw node.error(
          "a condition is one of fact (with subkind/attr), any, all, not or backend; got " + keys);
    }
    String key = keys.iterator().next();
    YamlNode v = m.get(key);
    return switch (key) {
      case "any" -> new Conditions.Any(children(v));
      case "all" -> new Conditions.All(children(v));
      case "not" -> new Conditions.Not(condition(v));
      case "backend" -> backend(v);
      default ->
          throw v.error("unknown condition '" + key + "' (use fact, any, all, not or backend)");
    };
  }

  private List<Condition> children(YamlNode node) {
    List<Condition> out = new ArrayList<>();
    for (YamlNode item : node.items()) out.add(condition(item));
    if (out.isEmpty()) throw node.error("must not be an empty list");
    return out;
  }

  /** A fact condition's {@code attr} or {@code attr_not}: attribute name to matcher; empty when absent. */
  private static Map<String, Conditions.AttrMatcher> attrs(YamlNode node) {
    Map<String, Conditions.AttrMatcher> out = new LinkedHashMap<>();
    if (node == null) return out;
    Map<String, YamlNode> m = node.entries();
    if (m.isEmpty()) throw node.error("must not be empty");
    m.forEach((k, v) -> out.put(k, new Conditions.AttrMatcher(matcher(v), matcher(v, false))));
    return out;
  }

  private static Condition backend(YamlNode node) {
    Map<String, YamlNode> m =
        node.allowOnly("extensions_all", "extensions_any", "catalog_impl_any", "spark_version")
            .entries();
    if (m.isEmpty())
      throw node.error(
          "backend needs at least one of extensions_all, extensions_any, catalog_impl_any, spark_version");
    return new Conditions.Backend(
        m.containsKey("extensions_all") ? m.get("extensions_all").strings() : List.of(),
        m.containsKey("extensions_any") ? m.get("extensions_any").strings() : List.of(),
        m.containsKey("catalog_impl_any") ? m.get("catalog_impl_any").strings() : List.of(),
        strings(m.get("spark_version")));
  }
}
