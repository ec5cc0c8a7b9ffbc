package io.sparkgate.policy;

import io.sparkgate.inspect.Fact;
import io.sparkgate.yaml.YamlNode;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A rule's message with {@code {name}} placeholders filled from the fact that matched: its attributes (e.g.
 * {@code {table}}, {@code {key}}, {@code {name}}), {@code {kind}}, {@code {subkind}} and {@code {rule}}. A
 * placeholder the fact lacks reads as empty. Config values are never shown (they can be secrets).
 */
final class MessageTemplate {
  private static final Pattern PLACEHOLDER = Pattern.compile("\\{([A-Za-z_][A-Za-z0-9_.]*)}");
  private static final int MAX_VALUE = 200;

  private final String text;

  private MessageTemplate(String text) {
    this.text = text;
  }

  /** Compiles a template; unbalanced braces are an error so typos surface at load. */
  static MessageTemplate compile(String text, YamlNode where) {
    Matcher m = PLACEHOLDER.matcher(text);
    StringBuilder rest = new StringBuilder();
    int last = 0;
    while (m.find()) {
      rest.append(text, last, m.start());
      last = m.end();
    }
    rest.append(text.substring(last));
    if (rest.indexOf("{") >= 0 || rest.indexOf("}") >= 0) {
      throw where.error("message has an unbalanced or invalid {placeholder}: " + text);
    }
    return new MessageTemplate(text);
  }

  String render(String rule, Fact witness) {
    Matcher m = PLACEHOLDER.matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(out, Matcher.quoteReplacement(value(m.group(1), rule, witness)));
    }
    m.appendTail(out);
    return out.toString();
  }

  private static String value(String name, String rule, Fact f) {
    String v =
        switch (name) {
          case "rule" -> rule;
          case "kind" -> f == null || f == Condition.NO_WITNESS ? null : f.kind().name();
          case "subkind" -> f == null || f == Condition.NO_WITNESS ? null : f.subkind();
          default -> f == null ? null : f.get(name);
        };
    if (v == null || v.isEmpty()) return "";
    if (f != null && f.kind() == Fact.Kind.CONFIG_SET && name.equals("value"))
      return "<value not shown>";
    String clean = v.replaceAll("\\p{Cntrl}", " ");
    return clean.length() > MAX_VALUE ? clean.substring(0, MAX_VALUE) + "..." : clean;
  }
}
