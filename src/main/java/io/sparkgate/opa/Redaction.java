package io.sparkgate.opa;

import io.sparkgate.config.SecretPatterns;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.SecretValues;
import io.sparkgate.inspect.SqlRedaction;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What of a fact's attributes may leave Sparkgate for OPA, whose decision log keeps every input: the values of
 * secret settings and options are replaced as Spark shows them, credentials in URIs are cut out, SQL and
 * expression texts lose their literals (unless the audit log keeps them, {@code audit.include_literals}), and
 * per-call identifiers are dropped, so that identical requests make identical documents the cache can share.
 */
final class Redaction {
  /** {@code s3a://key:secret@bucket/x}: everything up to the last {@code @} before the path is user info. */
  private static final Pattern USER_INFO =
      Pattern.compile("(?i)\\b([a-z][a-z0-9+.-]*://)[^/\\s]*@");

  /** Per-call or per-session identifiers: the audit record has them, joined by OPA's decision id. */
  private static final java.util.Set<String> DROPPED =
      java.util.Set.of("operation_id", "session_id");

  private final boolean includeLiterals;
  private final SecretPatterns secrets;

  Redaction(boolean includeLiterals, SecretPatterns secrets) {
    this.includeLiterals = includeLiterals;
    this.secrets = secrets;
  }

  /** The values of secret settings in {@code facts}, cut out of every text (see {@link SecretValues}). */
  java.util.List<String> secretValues(io.sparkgate.inspect.Facts facts) {
    return SecretValues.in(facts, secrets);
  }

  /** The attributes of {@code f} as OPA sees them, sorted by name. */
  Map<String, String> attributes(Fact f, java.util.List<String> secretValues) {
    Map<String, String> out = new TreeMap<>();
    boolean secretKey =
        f.get("key") != null
            && (f.kind() == Fact.Kind.CONFIG_SET || f.kind() == Fact.Kind.CONFIG_READ)
            && secrets.isSecret(f.get("key"));
    for (Map.Entry<String, String> e : f.attrs().entrySet()) {
      String name = e.getKey();
      String value = e.getValue();
      if (f.kind() == Fact.Kind.REQUEST && DROPPED.contains(name)) continue;
      if (value == null) continue;
      if ((name.equals("value") && secretKey)
          || (name.startsWith("option.") && secrets.isSecret(name.substring(7)))) {
        value = SecretPatterns.REDACTED;
      } else if (isText(f, name)) {
        value = includeLiterals ? value : SqlRedaction.redactLiterals(value);
        value = SecretValues.cut(value, secretValues);
      }
      out.put(name, withoutUserInfo(value));
    }
    return out;
  }

  /** SQL and expression strings: their literals can hold personal data. */
  private static boolean isText(Fact f, String name) {
    return (f.kind() == Fact.Kind.SQL && name.equals("sql"))
        || (f.kind() == Fact.Kind.EXPRESSION && name.equals("text"))
        || (f.kind() == Fact.Kind.EXECUTE_IMMEDIATE && name.equals("query"));
  }

  static String withoutUserInfo(String value) {
    if (value.indexOf('@') < 0 || !value.contains("://")) return value;
    return USER_INFO.matcher(value).replaceAll("$1***@");
  }
}
