package io.sparkgate.config;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A YAML mapping being read, which knows its file and dotted key so that every error can say where it is.
 * Every section declares the keys it accepts: an unknown key (usually a typo) is an error, never ignored.
 */
final class Node {
  private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*(b|kib|kb|mib|mb|gib|gb)?", Pattern.CASE_INSENSITIVE);
  private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(us|ms|s|m|h|d)", Pattern.CASE_INSENSITIVE);

  private final Path file;
  private final String path;
  private final JsonNode json;

  private Node(Path file, String path, JsonNode json) {
    this.file = file;
    this.path = path;
    this.json = json;
  }

  static Node root(Path file, JsonNode json) {
    Node root = new Node(file, "", json);
    if (json == null || json.isMissingNode() || json.isNull()) {
      throw root.error("the file is empty; see proxy/sparkgate.yaml for a complete example");
    }
    if (!json.isObject()) {
      throw root.error("the top level must be a mapping of sections (listen, tls, backend, ...)");
    }
    return root;
  }

  Path file() {
    return file;
  }

  /** Rejects keys this section does not define, naming the nearest valid ones. */
  Node allowOnly(String... keys) {
    Set<String> allowed = Set.of(keys);
    for (Iterator<String> it = json.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!allowed.contains(name)) {
        throw new ConfigException(
            String.format("%s: %s: unknown key (valid keys here: %s)", file, key(name), String.join(", ", new TreeSet<>(allowed))));
      }
    }
    return this;
  }

  boolean has(String key) {
    JsonNode value = json.get(key);
    return value != null && !value.isNull();
  }

  /** A nested section; a missing section reads as empty so that its defaults apply. */
  Node section(String key) {
    JsonNode value = json.get(key);
    if (value == null || value.isNull()) {
      return new Node(file, key(key), com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode());
    }
    if (!value.isObject()) {
      throw errorAt(key, "must be a mapping, got " + describe(value));
    }
    return new Node(file, key(key), value);
  }

  Optional<String> optionalString(String key) {
    JsonNode value = json.get(key);
    if (value == null || value.isNull()) {
      return Optional.empty();
    }
    if (!value.isTextual() && !value.isNumber()) {
      throw errorAt(key, "must be a string, got " + describe(value));
    }
    String text = value.asText().trim();
    if (text.isEmpty()) {
      throw errorAt(key, "must not be empty (remove the key to use the default)");
    }
    return Optional.of(text);
  }

  String string(String key, String fallback) {
    return optionalString(key).orElse(fallback);
  }

  String requiredString(String key, String hint) {
    return optionalString(key).orElseThrow(() -> errorAt(key, "is required: " + hint));
  }

  List<String> stringList(String key) {
    JsonNode value = json.get(key);
    if (value == null || value.isNull()) {
      return List.of();
    }
    if (!value.isArray()) {
      throw errorAt(key, "must be a list of strings, got " + describe(value));
    }
    List<String> out = new ArrayList<>();
    for (JsonNode item : value) {
      if (!item.isTextual() || item.asText().isBlank()) {
        throw errorAt(key, "must be a list of non-empty strings, got an item " + describe(item));
      }
      out.add(item.asText().trim());
    }
    return List.copyOf(out);
  }

  /** A single string or a list of strings (e.g. a JWT audience). */
  List<String> stringOrList(String key) {
    JsonNode value = json.get(key);
    if (value != null && !value.isNull() && !value.isArray()) {
      return List.of(requiredString(key, "a string or a list of strings"));
    }
    return stringList(key);
  }

  /** A mapping of string keys to string values (e.g. catalog name to class). */
  java.util.Map<String, String> stringMap(String key) {
    Node section = section(key);
    java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
    for (Iterator<String> it = section.json.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      out.put(name, section.requiredString(name, "a string"));
    }
    return java.util.Collections.unmodifiableMap(out);
  }

  /** A list of mappings, each read as its own section named {@code key[i]}. */
  List<Node> sectionList(String key) {
    JsonNode value = json.get(key);
    if (value == null || value.isNull()) {
      return List.of();
    }
    if (!value.isArray()) {
      throw errorAt(key, "must be a list of mappings, got " + describe(value));
    }
    List<Node> out = new ArrayList<>();
    int i = 0;
    for (JsonNode item : value) {
      String name = key(key) + "[" + i++ + "]";
      if (!item.isObject()) {
        throw new ConfigException(file + ": " + name + ": must be a mapping, got " + describe(item));
      }
      out.add(new Node(file, name, item));
    }
    return List.copyOf(out);
  }

  /** A list of file paths, each resolved like {@link #existingFile}. */
  List<Path> existingFiles(String key) {
    List<Path> out = new ArrayList<>();
    for (String text : stringList(key)) {
      out.add(resolveExisting(key, text));
    }
    return List.copyOf(out);
  }

  boolean bool(String key, boolean fallback) {
    JsonNode value = json.get(key);
    if (value == null || value.isNull()) {
      return fallback;
    }
    if (!value.isBoolean()) {
      throw errorAt(key, "must be true or false, got " + describe(value));
    }
    return value.booleanValue();
  }

  int integer(String key, int fallback, int min, int max) {
    JsonNode value = json.get(key);
    if (value == null || value.isNull()) {
      return fallback;
    }
    if (!value.canConvertToInt() || !value.isIntegralNumber()) {
      throw errorAt(key, "must be a whole number, got " + describe(value));
    }
    int n = value.intValue();
    if (n < min || n > max) {
      throw errorAt(key, "must be between " + min + " and " + max + ", got " + n);
    }
    return n;
  }

  /** A byte size such as {@code 134217728}, {@code 128MiB} or {@code 4 KiB}. */
  long bytes(String key, long fallback, long min, long max) {
    JsonNode value = json.get(key);
    if (value == null || value.isNull()) {
      return fallback;
    }
    long n;
    // Past a long is out of range: neither a parse error nor a size wrapped around into range.
    String outOfRange = "must be between " + min + " and " + max + " bytes, got " + describe(value);
    if (value.isIntegralNumber()) {
      if (!value.canConvertToLong()) throw errorAt(key, outOfRange);
      n = value.longValue();
    } else {
      Matcher m = SIZE.matcher(value.asText().trim());
      if (!value.isTextual() || !m.matches()) {
        throw errorAt(key, "must be a size such as 128MiB, 64KiB or a number of bytes, got " + describe(value));
      }
      try {
        n = Math.multiplyExact(Long.parseLong(m.group(1)), unit(m.group(2)));
      } catch (NumberFormatException | ArithmeticException e) {
        throw errorAt(key, outOfRange);
      }
    }
    if (n < min || n > max) {
      throw errorAt(key, "must be between " + min + " and " + max + " bytes, got " + n);
    }
    return n;
  }

  /** A duration such as {@code 50us}, {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}. */
  Duration duration(String key, Duration fallback, Duration min, Duration max) {
    JsonNode value = json.get(key);
    if (value == null || value.isNull()) {
      return fallback;
    }
    Matcher m = DURATION.matcher(value.asText().trim());
    if (!value.isTextual() || !m.matches()) {
      throw errorAt(key, "must be a duration such as 50us, 500ms, 30s, 5m or 1h, got " + describe(value));
    }
    Duration d;
    try {
      long n = Long.parseLong(m.group(1));
      d = switch (m.group(2).toLowerCase(Locale.ROOT)) {
        case "us" -> Duration.ofNanos(Math.multiplyExact(n, 1000L));
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    } catch (NumberFormatException | ArithmeticException e) {
      throw errorAt(key, "must be between " + human(min) + " and " + human(max) + ", got " + describe(value));
    }
    if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
      throw errorAt(key, "must be between " + human(min) + " and " + human(max) + ", got " + human(d));
    }
    return d;
  }

  /** A duration as the configuration writes it, in the largest unit that states it exactly: 50us, 2ms, 5m. */
  static String human(Duration d) {
    long nanos;
    try {
      nanos = d.toNanos();
    } catch (ArithmeticException beyondNanos) {
      return d.toDays() + "d";
    }
    String[] units = {"d", "h", "m", "s", "ms", "us"};
    long[] sizes = {86_400_000_000_000L, 3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L};
    for (int i = 0; i < units.length; i++) {
      if (nanos != 0 && nanos % sizes[i] == 0) {
        return nanos / sizes[i] + units[i];
      }
    }
    return nanos == 0 ? "0s" : nanos + "ns";
  }

  /** A file path, resolved against the directory of the configuration file; it must exist. */
  Optional<Path> existingFile(String key) {
    return optionalString(key).map(text -> resolveExisting(key, text));
  }

  private Path resolveExisting(String key, String text) {
    Path p = resolve(text);
    if (!java.nio.file.Files.isRegularFile(p)) {
      throw errorAt(key, "file " + p + " does not exist or is not a regular file");
    }
    if (!java.nio.file.Files.isReadable(p)) {
      throw errorAt(key, "file " + p + " is not readable by this user");
    }
    return p;
  }

  /** A path from this file, relative to the configuration file's directory; it need not exist yet. */
  Path resolve(String text) {
    Path base = file.toAbsolutePath().getParent();
    return base == null ? Path.of(text) : base.resolve(text).normalize();
  }

  ConfigException errorAt(String key, String problem) {
    return new ConfigException(file + ": " + key(key) + ": " + problem);
  }

  ConfigException error(String problem) {
    return new ConfigException(file + (path.isEmpty() ? "" : ": " + path) + ": " + problem);
  }

  private String key(String name) {
    return path.isEmpty() ? name : path + "." + name;
  }

  private static long unit(String suffix) {
    if (suffix == null) {
      return 1;
    }
    return switch (suffix.toLowerCase(Locale.ROOT)) {
      case "kib", "kb" -> 1024L;
      case "mib", "mb" -> 1024L * 1024;
      case "gib", "gb" -> 1024L * 1024 * 1024;
      default -> 1;
    };
  }

  private static String describe(JsonNode value) {
    if (value.isObject()) {
      return "a mapping";
    }
    if (value.isArray()) {
      return "a list";
    }
    return "'" + value.asText() + "'";
  }
}
