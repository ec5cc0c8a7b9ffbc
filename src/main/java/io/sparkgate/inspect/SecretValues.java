package io.sparkgate.inspect;

import io.sparkgate.config.SecretPatterns;
import java.util.ArrayList;
import java.util.List;

/**
 * The values of secret settings a request sets, cut out of every text Sparkgate records or sends on (the
 * audit record's SQL, OPA's input). {@code SET spark.hadoop.fs.s3a.secret.key=AKIA...} carries its value
 * unquoted, which Spark's lexer reads as an identifier: redacting literals leaves it in the text.
 */
public final class SecretValues {
  private SecretValues() {}

  /** The values of the secret settings (by {@code secrets}) that {@code facts} set. */
  public static List<String> in(Facts facts, SecretPatterns secrets) {
    List<String> values = new ArrayList<>();
    for (Fact f : facts.ofKind(Fact.Kind.CONFIG_SET)) {
      String key = f.get("key");
      String value = f.get("value");
      if (key != null && value != null && !value.isBlank() && secrets.isSecret(key)) {
        values.add(value.strip());
      }
    }
    return values;
  }

  /** {@code text} with each of {@code values} replaced by {@link SecretPatterns#REDACTED}. */
  public static String cut(String text, List<String> values) {
    for (String v : values) text = text.replace(v, SecretPatterns.REDACTED);
    return text;
  }
}
