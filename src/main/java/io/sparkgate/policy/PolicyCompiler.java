package io.sparkgate.policy;

import io.grpc.Status;
import io.sparkgate.inspect.Fact;
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
import java.util.HashMap;
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
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_.-]*");
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
    YamlNode root = YamlNode.parse(file, text);
    Map<String, YamlNode> top = root.mapping("the policy file", "default", "rules");
    Effect def = configDefault;
    if (top.containsKey("default")) {
      def = effect(top.get("default"), "default");
      if (def != Effect.ALLOW && def != Effect.DENY) throw top.get("default").error("default must be allow or deny");
    }
    Sources sources = new Sources(Path.of(file));
    List<Rule> rules = rules(root, top, sources);
    return new Policy(sources.files, rules, def);
  }

  /**
   * The rules of one file, included files' spliced in where their {@code - include:} item stands. Rule names
   * are unique across all of them.
   */
  private List<Rule> rules(YamlNode root, Map<String, YamlNode> top, Sources sources) {
    if (!top.containsKey("rules")) throw root.error("a policy file needs 'rules' (a list; it may be empty)");
    List<Rule> rules = new ArrayList<>();
    int i = 0;
    for (YamlNode item : top.get("rules").sequence("rules")) {
      if (item.isMapping() && item.mapping("a rule").containsKey("include")) {
        YamlNode include = item.mapping("an include", "include").get("include");
        rules.addAll(included(include, sources));
        i++;
        continue;
      }
      Rule r = rule(item, i++);
      String earlier = sources.names.putIfAbsent(r.name(), item.file());
      if (earlier != null) {
        throw item.in("rule '" + r.name() + "'").error("another rule already has this name"
            + (earlier.equals(item.file()) ? "" : " (in " + earlier + ")"));
      }
      rules.add(r);
    }
    return rules;
  }

  /** The rules of the file an {@code include:} names, relative to the including file's directory. */
  private List<Rule> included(YamlNode include, Sources sources) {
    String name = include.nonEmpty("include");
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
      throw include.error("include cycle: '" + name + "' is already being included (" + sources.including + ")");
    }
    if (!sources.included.add(real)) {
      throw include.error("'" + name + "' is already included elsewhere in this policy; include each file once");
    }
    if (sources.including.size() > MAX_INCLUDE_DEPTH) {
      throw include.error("includes nest deeper than " + MAX_INCLUDE_DEPTH + " files");
    }
    String shown = including.getParent() == null ? name : including.getParent().resolve(name).toString();
    YamlNode root = YamlNode.parse(shown, read(target, include));
    // An included file may set its own default (so that it also works on its own); the including file's wins.
    Map<String, YamlNode> top = root.mapping("an included policy file", "default", "rules");
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
    /** Each rule name, and the file that defined it. */
    final Map<String, String> names = new HashMap<>();

    Sources(Path top) {
      files.add(top.toString());
      try {
        including.add(top.toRealPath());
      } catch (IOException e) {
        including.add(top.toAbsolutePath().normalize()); // text not read from this path (tests, explain)
      }
    }
  }

  private Rule rule(YamlNode node, int index) {
    YamlNode unnamed = node.in("rule #" + (index + 1));
    Map<String, YamlNode> m = unnamed.mapping("a rule");
    if (!m.containsKey("name")) throw unnamed.error("'name' is required");
    String name = m.get("name").nonEmpty("name");
    YamlNode where = node.in("rule '" + name + "'");
    if (!NAME.matcher(name).matches()) throw where.error("name must be lower case letters, digits, '-', '_' or '.'");
    m = where.mapping("a rule", "name", "description", "effect", "mode", "match", "when", "message", "status",
        "error_class", "sql_state", "rewriter");
    if (!m.containsKey("description")) throw where.error("'description' is required: say why the rule exists");
    String description = m.get("description").nonEmpty("description");
    if (!m.containsKey("effect")) throw where.error("'effect' is required (deny, allow, audit or rewrite)");
    Effect effect = effect(m.get("effect"), "effect");
    boolean shadow = false;
    if (m.containsKey("mode")) {
      String mode = m.get("mode").nonEmpty("mode");
      if (mode.equals("shadow")) shadow = true;
      else if (!mode.equals("enforce")) throw m.get("mode").error("mode must be enforce or shadow, got '" + mode + "'");
    }
    Match match = m.containsKey("match") ? match(m.get("match")) : Match.ALL;
    Condition when = m.containsKey("when") ? condition(m.get("when")) : null;
    String defaultMessage = effect == Effect.DENY ? "Refused by the Sparkgate policy." : "";
    MessageTemplate message = MessageTemplate.compile(
        m.containsKey("message") ? m.get("message").nonEmpty("message") : defaultMessage, where);
    Status.Code code = Status.Code.PERMISSION_DENIED;
    if (m.containsKey("status")) {
      String s = m.get("status").nonEmpty("status").toUpperCase(Locale.ROOT);
      code = switch (s) {
        case "PERMISSION_DENIED" -> Status.Code.PERMISSION_DENIED;
        case "FAILED_PRECONDITION" -> Status.Code.FAILED_PRECONDITION;
        case "INVALID_ARGUMENT" -> Status.Code.INVALID_ARGUMENT;
        case "UNIMPLEMENTED" -> Status.Code.UNIMPLEMENTED;
        default -> throw m.get("status").error(
            "status must be permission_denied, failed_precondition, invalid_argument or unimplemented, got '" + s + "'");
      };
    }
    String errorClass = m.containsKey("error_class") ? m.get("error_class").nonEmpty("error_class") : Decision.ERROR_CLASS;
    if (!ERROR_CLASS.matcher(errorClass).matches()) throw where.error("error_class must be UPPER_SNAKE_CASE");
    String sqlState = m.containsKey("sql_state") ? m.get("sql_state").nonEmpty("sql_state") : Decision.SQL_STATE;
    if (!SQL_STATE.matcher(sqlState).matches()) throw where.error("sql_state must be 5 characters [0-9A-Z]");
    String rewriter = null;
    if (effect == Effect.REWRITE) {
      if (!m.containsKey("rewriter")) throw where.error("effect rewrite needs 'rewriter' (one of " + rewriters + ")");
      rewriter = m.get("rewriter").nonEmpty("rewriter");
      if (!rewriters.contains(rewriter)) {
        throw m.get("rewriter").error("unknown rewriter '" + rewriter + "' (known: " + rewriters + ")");
      }
    } else if (m.containsKey("rewriter")) {
      throw m.get("rewriter").error("'rewriter' only goes with effect: rewrite");
    }
    if ((effect == Effect.ALLOW || effect == Effect.AUDIT) && (m.containsKey("status") || m.containsKey("error_class"))) {
      throw where.error("status and error_class only apply to deny and rewrite rules");
    }
    return new Rule(name, description, effect, shadow, match, when, message, code, errorClass, sqlState, rewriter,
        node.line());
  }

  private static Effect effect(YamlNode node, String what) {
    String v = node.nonEmpty(what);
    return switch (v) {
      case "deny" -> Effect.DENY;
      case "allow" -> Effect.ALLOW;
      case "audit" -> Effect.AUDIT;
      case "rewrite" -> Effect.REWRITE;
      default -> throw node.error(what + " must be deny, allow, audit or rewrite, got '" + v + "'");
    };
  }

  private Match match(YamlNode node) {
    Map<String, YamlNode> m = node.mapping("match", "rpc", "principal", "groups", "tenant", "except_groups",
        "except_principals");
    return new Match(strings(m.get("rpc"), "match.rpc"), strings(m.get("principal"), "match.principal"),
        strings(m.get("groups"), "match.groups"), strings(m.get("tenant"), "match.tenant"),
        strings(m.get("except_groups"), "match.except_groups"),
        strings(m.get("except_principals"), "match.except_principals"));
  }

  private static StringMatcher strings(YamlNode node, String what) {
    return node == null ? null : matcher(node, what);
  }

  /** A glob, a {regex: ...}, or a list of either. */
  static StringMatcher matcher(YamlNode node, String what) {
    if (node.isScalar()) return StringMatcher.glob(node.nonEmpty(what));
    if (node.isMapping()) {
      Map<String, YamlNode> m = node.mapping(what, "regex");
      if (!m.containsKey("regex")) throw node.error(what + ": a matcher mapping needs 'regex'");
      String re = m.get("regex").nonEmpty(what + ".regex");
      try {
        return StringMatcher.regex(Pattern.compile(re));
      } catch (PatternSyntaxException e) {
        throw m.get("regex").error(what + ": invalid regex: " + e.getDescription());
      }
    }
    List<StringMatcher> any = new ArrayList<>();
    for (YamlNode item : node.sequence(what)) {
      if (item.isSequence()) throw item.error(what + ": nested lists are not allowed");
      any.add(matcher(item, what));
    }
    if (any.isEmpty()) throw node.error(what + " must not be an empty list");
    return StringMatcher.anyOf(any);
  }

  /** A condition mapping, or a list of them (all must hold). */
  Condition condition(YamlNode node) {
    if (node.isSequence()) return new Conditions.All(children(node, "when"));
    Map<String, YamlNode> m = node.mapping("a condition");
    Set<String> keys = m.keySet();
    if (keys.contains("fact")) {
      m = node.mapping("a fact condition", "fact", "subkind", "subkind_not", "attr", "attr_not");
      Set<Fact.Kind> kinds = EnumSet.noneOf(Fact.Kind.class);
      for (String k : m.get("fact").strings("fact")) {
        try {
          kinds.add(Fact.Kind.valueOf(k));
        } catch (IllegalArgumentException e) {
          throw m.get("fact").error("unknown fact kind '" + k + "' (kinds: " + List.of(Fact.Kind.values()) + ")");
        }
      }
      StringMatcher subkind = m.containsKey("subkind") ? matcher(m.get("subkind"), "subkind") : null;
      StringMatcher subkindNot = m.containsKey("subkind_not") ? matcher(m.get("subkind_not"), "subkind_not") : null;
      Map<String, StringMatcher> attrs = new LinkedHashMap<>();
      if (m.containsKey("attr")) {
        Map<String, YamlNode> a = m.get("attr").mapping("attr");
        if (a.isEmpty()) throw m.get("attr").error("attr must not be empty");
        a.forEach((k, v) -> attrs.put(k, matcher(v, "attr." + k)));
      }
      Map<String, StringMatcher> attrsNot = new LinkedHashMap<>();
      if (m.containsKey("attr_not")) {
        Map<String, YamlNode> a = m.get("attr_not").mapping("attr_not");
        if (a.isEmpty()) throw m.get("attr_not").error("attr_not must not be empty");
        a.forEach((k, v) -> attrsNot.put(k, matcher(v, "attr_not." + k)));
      }
      return new Conditions.FactCondition(kinds, subkind, subkindNot, attrs, attrsNot);
    }
    if (keys.size() != 1) {
      throw node.error("a condition is one of fact (with subkind/attr), any, all, not or backend; got " + keys);
    }
    String key = keys.iterator().next();
    YamlNode v = m.get(key);
    return switch (key) {
      case "any" -> new Conditions.Any(children(v, "any"));
      case "all" -> new Conditions.All(children(v, "all"));
      case "not" -> new Conditions.Not(condition(v));
      case "backend" -> backend(v);
      default -> throw v.error("unknown condition '" + key + "' (use fact, any, all, not or backend)");
    };
  }

  private List<Condition> children(YamlNode node, String what) {
    List<Condition> out = new ArrayList<>();
    for (YamlNode item : node.sequence(what)) out.add(condition(item));
    if (out.isEmpty()) throw node.error(what + " must not be an empty list");
    return out;
  }

  private static Condition backend(YamlNode node) {
    Map<String, YamlNode> m = node.mapping("backend", "extensions_all", "extensions_any", "catalog_impl_any",
        "spark_version");
    if (m.isEmpty()) throw node.error("backend needs at least one of extensions_all, extensions_any, catalog_impl_any, spark_version");
    return new Conditions.Backend(
        m.containsKey("extensions_all") ? m.get("extensions_all").strings("extensions_all") : List.of(),
        m.containsKey("extensions_any") ? m.get("extensions_any").strings("extensions_any") : List.of(),
        m.containsKey("catalog_impl_any") ? m.get("catalog_impl_any").strings("catalog_impl_any") : List.of(),
        m.containsKey("spark_version") ? matcher(m.get("spark_version"), "spark_version") : null);
  }
}
