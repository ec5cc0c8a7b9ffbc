package io.sparkgate.grants;

import io.sparkgate.yaml.YamlNode;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The names a policy file gives its rules or its grants, which refusals and the audit log cite: each item has
 * one, of lower case letters, digits, {@code -}, {@code _} and {@code .}, unique among its kind, and only the
 * keys its kind defines; errors name the file, line and item. Rules and grants are read through this one
 * class so that both take names alike. It lives here because the policy compiler, which reads the rules,
 * may import grants, and not the other way round.
 */
public final class ItemNames {
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_.-]*");

  private final String kind;

  /** Each name given so far, and the file that gave it (includes spread a policy's rules over files). */
  private final Map<String, String> files = new HashMap<>();

  /** @param kind what the items are, as messages name them: {@code rule}, {@code grant} */
  public ItemNames(String kind) {
    this.kind = kind;
  }

  /**
   * Reads the name of {@code item}, the {@code index}th of its list (from 0), and refuses any key but
   * {@code name} and {@code keys}. Before it has a name an item is cited by its number ({@code rule #3}).
   */
  public Named read(YamlNode item, int index, String... keys) {
    YamlNode unnamed = item.in(kind + " #" + (index + 1));
    Map<String, YamlNode> m = unnamed.entries();
    if (!m.containsKey("name")) throw unnamed.error("'name' is required");
    String name = m.get("name").text();
    YamlNode named = item.in(kind + " '" + name + "'");
    if (!NAME.matcher(name).matches()) {
      throw named.errorAt("name", "must be lower case letters, digits, '-', '_' or '.'");
    }
    String[] allowed = new String[keys.length + 1];
    allowed[0] = "name";
    System.arraycopy(keys, 0, allowed, 1, keys.length);
    return new Named(name, named, named.allowOnly(allowed).entries());
  }

  /**
   * Counts {@code item}'s name as taken, once the whole item has been read (its own mistakes come first).
   *
   * @throws RuntimeException the file's error, if another item of this kind has the name
   */
  public void claim(Named item) {
    String earlier = files.putIfAbsent(item.name(), item.node().file());
    if (earlier != null) {
      throw item.node()
          .error(
              "another "
                  + kind
                  + " already has this name"
                  + (earlier.equals(item.node().file()) ? "" : " (in " + earlier + ")"));
    }
  }

  /** The names taken so far. */
  public Set<String> names() {
    return Collections.unmodifiableSet(files.keySet());
  }

  /**
   * An item with its name: {@code node} cites it by name in errors ({@code rule 'no-udf'}), and {@code keys}
   * are its entries, all of them known.
   */
  public record Named(String name, YamlNode node, Map<String, YamlNode> keys) {}
}
