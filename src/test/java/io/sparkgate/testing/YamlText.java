package io.sparkgate.testing;

import java.util.List;

/** YAML text that tests write for the real readers of policies and grants. */
public final class YamlText {
  private YamlText() {}

  /** A flow list of double-quoted strings, {@code ["a", "b\\"c"]}: every character of each as it is. */
  public static String flowList(List<String> values) {
    StringBuilder out = new StringBuilder("[");
    for (int i = 0; i < values.size(); i++) {
      if (i > 0) out.append(", ");
      out.append('"').append(values.get(i).replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
    }
    return out.append(']').toString();
  }
}
