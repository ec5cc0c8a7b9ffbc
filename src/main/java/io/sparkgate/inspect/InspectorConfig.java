package io.sparkgate.inspect;

import java.util.Set;

/**
 * Bounds and knowledge of the inspector. Everything beyond a bound becomes an UNCLASSIFIED fact.
 *
 * @param maxDepth protobuf message nesting accepted (Spark's own server defaults to 1024,
 *     {@code spark.connect.grpc.marshallerRecursionLimit}); deeper is {@code plan_too_deep}
 * @param maxSqlChars SQL or expression text longer than this is {@code sql_too_long}, never parsed
 * @param maxDecompressedBytes a compressed plan inflating past this is {@code compressed_plan_too_large}
 * @param maxFacts facts per message before {@code too_many_facts}
 * @param knownExtensionTypeUrls extension type URLs that are not also reported as unknown_extension
 */
public record InspectorConfig(
    int maxDepth,
    int maxSqlChars,
    long maxDecompressedBytes,
    int maxFacts,
    Set<String> knownExtensionTypeUrls) {

  public static final InspectorConfig DEFAULTS =
      new InspectorConfig(1024, 1 << 20, 64L << 20, 10_000, Set.of());

  public InspectorConfig {
    if (maxDepth < 16)
      throw new IllegalArgumentException("maxDepth must be at least 16, got " + maxDepth);
    if (maxDepth > 5000) {
      // protobuf-java and our SQL parse recurse on the thread's stack; much beyond this risks
      // overflow.
      throw new IllegalArgumentException("maxDepth must be at most 5000, got " + maxDepth);
    }
    if (maxSqlChars < 1)
      throw new IllegalArgumentException("maxSqlChars must be positive, got " + maxSqlChars);
    if (maxDecompressedBytes < 1) {
      throw new IllegalArgumentException(
          "maxDecompressedBytes must be positive, got " + maxDecompressedBytes);
    }
    if (maxFacts < 10)
      throw new IllegalArgumentException("maxFacts must be at least 10, got " + maxFacts);
    knownExtensionTypeUrls = Set.copyOf(knownExtensionTypeUrls);
  }

  /** This configuration with another bound on decompressed plans ({@code policy.max_decompressed_plan_bytes}). */
  public InspectorConfig withMaxDecompressedBytes(long bytes) {
    return new InspectorConfig(maxDepth, maxSqlChars, bytes, maxFacts, knownExtensionTypeUrls);
  }
}
