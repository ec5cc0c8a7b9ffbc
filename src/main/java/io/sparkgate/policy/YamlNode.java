package io.sparkgate.policy;

import java.io.Reader;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * A YAML node of a policy or test file that knows where it is (file, line, the rule being read), so every
 * error names them. Read as SnakeYAML nodes, never constructed into objects: no tags, no aliases to expand.
 */
final class YamlNode {
  private final String file;
  private final String context; // e.g. "rule 'no-udf'", or ""
  private final Node node;

  private YamlNode(String file, String context, Node node) {
    this.file = file;
    this.context = context;
    this.node = node;
  }

  static YamlNode parse(String file, Reader text) {
    LoaderOptions options = new LoaderOptions();
    options.setMaxAliasesForCollections(0);
    options.setAllowRecursiveKeys(false);
    options.setCodePointLimit(4 * 1024 * 1024);
    Node root;
    try {
      root = new Yaml(new SafeConstructor(options), new org.yaml.snakeyaml.representer.Representer(
          new org.yaml.snakeyaml.DumperOptions()), new org.yaml.snakeyaml.DumperOptions(), options).compose(text);
    } catch (MarkedYAMLException e) {
      int line = e.getProblemMark() == null ? 0 : e.getProblemMark().getLine() + 1;
      throw new PolicyException(file + ":" + line + ": not valid YAML: " + e.getProblem());
    } catch (RuntimeException e) {
      throw new PolicyException(file + ": not valid YAML: " + e.getMessage(), e);
    }
    if (root == null) throw new PolicyException(file + ":1: the file is empty");
    return new YamlNode(file, "", root);
  }

  int line() {
    return node.getStartMark() == null ? 0 : node.getStartMark().getLine() + 1;
  }

  String file() {
    return file;
  }

  YamlNode in(String newContext) {
    return new YamlNode(file, newContext, node);
  }

  PolicyException error(String problem) {
    return new PolicyException(file + ":" + line() + ": " + (context.isEmpty() ? "" : context + ": ") + problem);
  }

  boolean isMapping() {
    return node instanceof MappingNode;
  }

  boolean isSequence() {
    return node instanceof SequenceNode;
  }

  boolean isScalar() {
    return node instanceof ScalarNode;
  }

  /** The entries of a mapping, in order; duplicate keys are an error (YAML would silently keep one). */
  Map<String, YamlNode> mapping(String what) {
    if (!(node instanceof MappingNode m)) throw error(what + " must be a mapping, got " + describe());
    Map<String, YamlNode> out = new LinkedHashMap<>();
    for (NodeTuple t : m.getValue()) {
      if (!(t.getKeyNode() instanceof ScalarNode k)) throw new YamlNode(file, context, t.getKeyNode()).error("keys must be plain strings");
      if (out.put(k.getValue(), new YamlNode(file, context, t.getValueNode())) != null) {
        throw new YamlNode(file, context, k).error("duplicate key '" + k.getValue() + "'");
      }
    }
    return out;
  }

  /** The entries of a mapping that may only hold these keys. */
  Map<String, YamlNode> mapping(String what, String... allowed) {
    Map<String, YamlNode> out = mapping(what);
    Set<String> ok = Set.of(allowed);
    for (Map.Entry<String, YamlNode> e : out.entrySet()) {
      if (!ok.contains(e.getKey())) {
        throw e.getValue().error("unknown key '" + e.getKey() + "' in " + what + " (valid keys: "
            + String.join(", ", new TreeSet<>(ok)) + ")");
      }
    }
    return out;
  }

  List<YamlNode> sequence(String what) {
    if (!(node instanceof SequenceNode s)) throw error(what + " must be a list, got " + describe());
    List<YamlNode> out = new ArrayList<>();
    for (Node n : s.getValue()) out.add(new YamlNode(file, context, n));
    return out;
  }

  String scalar(String what) {
    if (!(node instanceof ScalarNode s)) throw error(what + " must be a string, got " + describe());
    return s.getValue();
  }

  String nonEmpty(String what) {
    String v = scalar(what).strip();
    if (v.isEmpty()) throw error(what + " must not be empty");
    return v;
  }

  /** A string or a list of strings. */
  List<String> strings(String what) {
    if (node instanceof ScalarNode) return List.of(nonEmpty(what));
    List<String> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (YamlNode item : sequence(what)) {
      String v = item.nonEmpty(what + " item");
      if (seen.add(v)) out.add(v);
    }
    if (out.isEmpty()) throw error(what + " must not be an empty list");
    return out;
  }

  boolean bool(String what) {
    String v = scalar(what);
    return switch (v) {
      case "true" -> true;
      case "false" -> false;
      default -> throw error(what + " must be true or false, got '" + v + "'");
    };
  }

  private String describe() {
    if (node instanceof MappingNode) return "a mapping";
    if (node instanceof SequenceNode) return "a list";
    return "'" + ((ScalarNode) node).getValue() + "'";
  }
}
