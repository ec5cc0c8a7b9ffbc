package io.sparkgate.yaml;

import java.io.Reader;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * A node of a configuration, policy or policy test file that knows where it is, so that every error reads
 * {@code file:line: key.path: problem} (with the rule or case being read before the key path, when one is).
 *
 * <p>Files are read as SnakeYAML nodes, never constructed into objects: no tag constructs anything, no alias of a
 * mapping or list is expanded, and every node keeps its line. A key given twice anywhere in a file is refused when the file
 * is parsed, naming both lines: YAML loaders otherwise keep one of them silently.
 */
public final class YamlNode {
  /** Plain decimal integers only: YAML 1.1 would read {@code 017} as octal 15, which nobody writing a port means. */
  private static final Pattern DECIMAL = Pattern.compile("[-+]?(0|[1-9][0-9_]*)");

  /** The file being read, and how its errors are raised (a ConfigException, a PolicyException). */
  private record Source(
      String file, BiFunction<String, Throwable, ? extends RuntimeException> errors) {}

  private final Source source;
  private final String scope; // e.g. "rule 'no-udf'", or ""
  private final String
      path; // e.g. "audit.fsync", "rules[2].when", or "" for the top or a scope's node
  private final Node node;
  private final int line;

  private YamlNode(Source source, String scope, String path, Node node, int line) {
    this.source = source;
    this.scope = scope;
    this.path = path;
    this.node = node;
    this.line = line;
  }

  /**
   * Parses one YAML document. An empty document reads as a null node ({@link #isNull()}).
   *
   * @param file names the file in every message
   * @param errors makes the exception each error is raised as, from its message and cause (may be null)
   */
  public static YamlNode parse(
      String file, Reader text, BiFunction<String, Throwable, ? extends RuntimeException> errors) {
    // Aliases of mappings or lists could multiply a small file into a huge tree (and no file of
    // ours needs one).
    LoaderOptions options = new LoaderOptions();
    options.setMaxAliasesForCollections(0);
    options.setAllowRecursiveKeys(false);
    options.setCodePointLimit(4 * 1024 * 1024);
    Node root;
    try {
      root = new Yaml(options).compose(text);
    } catch (MarkedYAMLException e) {
      Mark m = e.getProblemMark();
      String where = m == null ? "" : ":" + (m.getLine() + 1) + ":" + (m.getColumn() + 1);
      throw errors.apply(file + where + ": not valid YAML: " + e.getProblem(), e);
    } catch (RuntimeException e) { // a limit, an unreadable character: no position to name
      throw errors.apply(file + ": not valid YAML: " + e.getMessage(), e);
    }
    Source source = new Source(file, errors);
    if (root == null) {
      return new YamlNode(
          source,
          "",
          "",
          new ScalarNode(Tag.NULL, "", null, null, DumperOptions.ScalarStyle.PLAIN),
          1);
    }
    YamlNode top = new YamlNode(source, "", "", root, lineOf(root));
    top.checkKeys();
    return top;
  }

  /** Every mapping in the file is read once, so that a duplicate key is refused even where nothing reads it. */
  private void checkKeys() {
    if (isMapping()) {
      entries().values().forEach(YamlNode::checkKeys);
    } else if (isSequence()) {
      items().forEach(YamlNode::checkKeys);
    }
  }

  /** The file as the messages name it. */
  public String file() {
    return source.file;
  }

  /** The line errors about this node name: its key's line for a value of a mapping. */
  public int line() {
    return line;
  }

  /** This node, with errors naming {@code scope} (a rule, a test case) and key paths starting again from it. */
  public YamlNode in(String scope) {
    return new YamlNode(source, scope, "", node, line);
  }

  /** An error naming this node's file, line, scope and key path, as the exception the file's reader asked for. */
  public RuntimeException error(String problem) {
    StringBuilder message = new StringBuilder(source.file).append(':').append(line).append(": ");
    if (!scope.isEmpty()) message.append(scope).append(": ");
    if (!path.isEmpty()) message.append(path).append(": ");
    return source.errors.apply(message.append(problem).toString(), null);
  }

  /** An error about {@code key} of this mapping, at its line if it is set, else at this node's. */
  public RuntimeException errorAt(String key, String problem) {
    YamlNode child = child(key);
    return (child != null ? child : new YamlNode(source, scope, join(path, key), node, line))
        .error(problem);
  }

  public boolean isNull() {
    return node instanceof ScalarNode && node.getTag().equals(Tag.NULL);
  }

  public boolean isMapping() {
    return node instanceof MappingNode;
  }

  public boolean isSequence() {
    return node instanceof SequenceNode;
  }

  public boolean isScalar() {
    return node instanceof ScalarNode;
  }

  /** The entries of a mapping in file order, null values included. */
  public Map<String, YamlNode> entries() {
    if (!(node instanceof MappingNode m)) throw error(mustBe("a mapping"));
    Map<String, YamlNode> out = new LinkedHashMap<>();
    for (NodeTuple t : m.getValue()) {
      if (!(t.getKeyNode() instanceof ScalarNode k)) {
        YamlNode key = new YamlNode(source, scope, path, t.getKeyNode(), lineOf(t.getKeyNode()));
        throw key.error("a key must be a string, got " + key.describe());
      }
      YamlNode value =
          new YamlNode(source, scope, join(path, k.getValue()), t.getValueNode(), lineOf(k));
      YamlNode first = out.putIfAbsent(k.getValue(), value);
      if (first != null) throw value.error("duplicate key (first at line " + first.line + ")");
    }
    return Collections.unmodifiableMap(out);
  }

  /** Refuses keys this mapping does not define (usually a typo), naming the valid ones. */
  public YamlNode allowOnly(String... keys) {
    Set<String> allowed = Set.of(keys);
    for (String name : entries().keySet()) {
      if (!allowed.contains(name)) {
        throw errorAt(
            name,
            "unknown key (valid keys here: " + String.join(", ", new TreeSet<>(allowed)) + ")");
      }
    }
    return this;
  }

  public List<YamlNode> items() {
    if (!(node instanceof SequenceNode s)) throw error(mustBe("a list"));
    List<YamlNode> out = new ArrayList<>();
    for (Node item : s.getValue())
      out.add(new YamlNode(source, scope, path + "[" + out.size() + "]", item, lineOf(item)));
    return out;
  }

  /** A scalar's text as written: {@code 3.50} stays {@code 3.50}, {@code on} stays {@code on}. */
  public String scalar() {
    if (!(node instanceof ScalarNode s)) throw error("must be a string, got " + describe());
    return s.getValue();
  }

  /** A scalar's text, stripped; it must not be empty. */
  public String text() {
    String v = scalar().strip();
    if (v.isEmpty()) throw error("must not be empty");
    return v;
  }

  /** A string or a list of strings, without repeats; never empty. */
  public List<String> strings() {
    if (isScalar()) return List.of(text());
    List<String> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (YamlNode item : items()) {
      String v = item.text();
      if (seen.add(v)) out.add(v);
    }
    if (out.isEmpty()) throw error("must not be an empty list");
    return out;
  }

  // Settings of a configuration section, read by key: an absent or null key means the default.

  public boolean has(String key) {
    return value(key) != null;
  }

  /** A nested section; a missing section reads as empty so that its defaults apply. */
  public YamlNode section(String key) {
    YamlNode v = value(key);
    if (v == null) {
      YamlNode child = child(key);
      Node empty = new MappingNode(Tag.MAP, List.of(), DumperOptions.FlowStyle.BLOCK);
      return new YamlNode(source, scope, join(path, key), empty, child == null ? line : child.line);
    }
    if (!v.isMapping()) throw v.error(v.mustBe("a mapping"));
    return v;
  }

  /** The items of a list whose items may be strings or mappings (each named {@code key[i]}); empty if unset. */
  public List<YamlNode> list(String key) {
    YamlNode v = value(key);
    if (v == null) return List.of();
    if (!v.isSequence()) throw v.error(v.mustBe("a list"));
    return v.items();
  }

  /** A list of mappings, each read as its own section named {@code key[i]}. */
  public List<YamlNode> sectionList(String key) {
    YamlNode v = value(key);
    if (v == null) return List.of();
    if (!v.isSequence()) throw v.error("must be a list of mappings, got " + v.describe());
    List<YamlNode> items = v.items();
    for (YamlNode item : items) {
      if (!item.isMapping()) throw item.error(item.mustBe("a mapping"));
    }
    return items;
  }

  /** A string or a number, trimmed; YAML's true/false/yes/no where a name or path belongs is a slip. */
  public Optional<String> optionalString(String key) {
    YamlNode v = value(key);
    if (v == null) return Optional.empty();
    if (!v.isScalar() || v.node.getTag().equals(Tag.BOOL))
      throw v.error("must be a string, got " + v.describe());
    String text = v.scalar().trim();
    if (text.isEmpty()) throw v.error("must not be empty (remove the key to use the default)");
    return Optional.of(text);
  }

  public String string(String key, String fallback) {
    return optionalString(key).orElse(fallback);
  }

  public String requiredString(String key, String hint) {
    return optionalString(key).orElseThrow(() -> errorAt(key, "is required: " + hint));
  }

  /** A list of strings (not numbers or booleans), each trimmed and not empty. */
  public List<String> stringList(String key) {
    YamlNode v = value(key);
    if (v == null) return List.of();
    if (!v.isSequence()) throw v.error("must be a list of strings, got " + v.describe());
    List<String> out = new ArrayList<>();
    for (YamlNode item : v.items()) {
      if (!item.isString() || item.scalar().isBlank()) {
        throw item.error("must be a non-empty string, got " + item.describe());
      }
      out.add(item.scalar().trim());
    }
    return List.copyOf(out);
  }

  /** A single string or a list of strings (e.g. a JWT audience). */
  public List<String> stringOrList(String key) {
    YamlNode v = value(key);
    if (v != null && !v.isSequence())
      return List.of(requiredString(key, "a string or a list of strings"));
    return stringList(key);
  }

  /** A mapping of string keys to string values (e.g. catalog name to class). */
  public Map<String, String> stringMap(String key) {
    YamlNode section = section(key);
    Map<String, String> out = new LinkedHashMap<>();
    for (String name : section.entries().keySet()) {
      out.put(name, section.requiredString(name, "a string"));
    }
    return Collections.unmodifiableMap(out);
  }

  public boolean bool(String key, boolean fallback) {
    YamlNode v = value(key);
    if (v == null) return fallback;
    if (!v.isScalar() || !v.node.getTag().equals(Tag.BOOL))
      throw v.error("must be true or false, got " + v.describe());
    // YAML 1.1's booleans, as the resolver that tagged this one reads them.
    return switch (v.scalar().toLowerCase(Locale.ROOT)) {
      case "true", "yes", "on" -> true;
      default -> false;
    };
  }

  public int integer(String key, int fallback, int min, int max) {
    YamlNode v = value(key);
    if (v == null) return fallback;
    if (!v.isScalar()
        || !v.node.getTag().equals(Tag.INT)
        || !DECIMAL.matcher(v.scalar()).matches()) {
      throw v.error("must be a whole number, got " + v.describe());
    }
    BigInteger n = new BigInteger(v.scalar().replace("_", ""));
    if (n.compareTo(BigInteger.valueOf(min)) < 0 || n.compareTo(BigInteger.valueOf(max)) > 0) {
      throw v.error("must be between " + min + " and " + max + ", got " + n);
    }
    return n.intValueExact();
  }

  /** A byte size such as {@code 134217728}, {@code 128MiB} or {@code 4 KiB}. */
  public long bytes(String key, long fallback, long min, long max) {
    YamlNode v = value(key);
    if (v == null) return fallback;
    OptionalLong n;
    try {
      n = v.isScalar() ? Units.bytes(v.scalar()) : OptionalLong.empty();
    } catch (ArithmeticException e) {
      // Past a long is out of range: neither a parse error nor a size wrapped around into range.
      throw v.error("must be between " + min + " and " + max + " bytes, got " + v.describe());
    }
    if (n.isEmpty())
      throw v.error(
          "must be a size such as 128MiB, 64KiB or a number of bytes, got " + v.describe());
    if (n.getAsLong() < min || n.getAsLong() > max) {
      throw v.error("must be between " + min + " and " + max + " bytes, got " + n.getAsLong());
    }
    return n.getAsLong();
  }

  /** A duration such as {@code 50us}, {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}. */
  public Duration duration(String key, Duration fallback, Duration min, Duration max) {
    YamlNode v = value(key);
    if (v == null) return fallback;
    String range = "must be between " + Units.human(min) + " and " + Units.human(max) + ", got ";
    Optional<Duration> d;
    try {
      d = v.isString() ? Units.duration(v.scalar()) : Optional.empty();
    } catch (ArithmeticException e) {
      throw v.error(range + v.describe());
    }
    if (d.isEmpty())
      throw v.error("must be a duration such as 50us, 500ms, 30s, 5m or 1h, got " + v.describe());
    if (d.get().compareTo(min) < 0 || d.get().compareTo(max) > 0)
      throw v.error(range + Units.human(d.get()));
    return d.get();
  }

  /** A file path, resolved against the directory of this file; it must exist. */
  public Optional<Path> existingFile(String key) {
    return optionalString(key).map(text -> existing(key, resolve(text)));
  }

  /** A list of file paths, each resolved like {@link #existingFile}. */
  public List<Path> existingFiles(String key) {
    return stringList(key).stream().map(text -> existing(key, resolve(text))).toList();
  }

  /** A path from this file, relative to this file's directory; it need not exist yet. */
  public Path resolve(String text) {
    try {
      Path base = Path.of(source.file).toAbsolutePath().getParent();
      return base == null ? Path.of(text) : base.resolve(text).normalize();
    } catch (InvalidPathException e) { // a NUL written as "\0", say
      throw error("'" + text + "' is not a valid path: " + e.getReason());
    }
  }

  private Path existing(String key, Path p) {
    if (!Files.isRegularFile(p))
      throw errorAt(key, "file " + p + " does not exist or is not a regular file");
    if (!Files.isReadable(p)) throw errorAt(key, "file " + p + " is not readable by this user");
    return p;
  }

  /** The value of {@code key} in this mapping, or null if it is absent or null. */
  private YamlNode value(String key) {
    YamlNode child = child(key);
    return child == null || child.isNull() ? null : child;
  }

  /** The entry {@code key} of this mapping (its value may be null), or null if there is none. */
  private YamlNode child(String key) {
    return node instanceof MappingNode ? entries().get(key) : null;
  }

  /** A scalar YAML reads as text: not a boolean, number or null. */
  private boolean isString() {
    if (!(node instanceof ScalarNode)) return false;
    Tag tag = node.getTag();
    return !tag.equals(Tag.BOOL)
        && !tag.equals(Tag.INT)
        && !tag.equals(Tag.FLOAT)
        && !tag.equals(Tag.NULL);
  }

  private String mustBe(String what) {
    return (path.isEmpty() && scope.isEmpty() ? "the top level must be " : "must be ")
        + what
        + ", got "
        + describe();
  }

  private String describe() {
    if (node instanceof MappingNode) return "a mapping";
    if (node instanceof SequenceNode) return "a list";
    return "'" + ((ScalarNode) node).getValue() + "'";
  }

  private static String join(String path, String key) {
    return path.isEmpty() ? key : path + "." + key;
  }

  private static int lineOf(Node node) {
    return node.getStartMark() == null ? 0 : node.getStartMark().getLine() + 1;
  }
}
