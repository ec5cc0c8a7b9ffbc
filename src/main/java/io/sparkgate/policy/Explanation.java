package io.sparkgate.policy;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.sparkgate.inspect.Fact;
import io.sparkgate.inspect.Facts;
import io.sparkgate.proto.spark.AddArtifactsRequest;
import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@code policy explain} shows for one request: the facts the policy decided over (after enrichment),
 * the decision and the rule that made it, and the shadow rules that would have. One code path for the CLI
 * and the admin console's playground, so both show what the proxy would decide.
 */
public record Explanation(List<Fact> facts, Decision decision) {
  public Explanation {
    facts = List.copyOf(facts);
  }

  /**
   * Enriches {@code facts} and decides on them with {@code engine}, as the decide stage does for {@code
   * method} called by {@code principal}.
   */
  public static Explanation of(
      PolicyEngine engine, String method, String principal, List<String> groups, Facts facts) {
    Facts enriched = engine.enrich(facts);
    Decision d = engine.decide(method, principal, groups, "", enriched);
    return new Explanation(enriched.all(), d);
  }

  /** The RPCs a request given as JSON may be for. */
  public static final List<String> METHODS =
      List.of("ExecutePlan", "AnalyzePlan", "Config", "AddArtifacts");

  /**
   * The wire bytes of a {@code method} request written as protobuf JSON.
   *
   * @throws IllegalArgumentException for another method, or JSON that is not such a request (the message
   *     says why)
   */
  public static byte[] requestFromJson(String method, String json) {
    Message.Builder builder =
        switch (method) {
          case "ExecutePlan" -> ExecutePlanRequest.newBuilder();
          case "AnalyzePlan" -> AnalyzePlanRequest.newBuilder();
          case "Config" -> ConfigRequest.newBuilder();
          case "AddArtifacts" -> AddArtifactsRequest.newBuilder();
          default ->
              throw new IllegalArgumentException(
                  "unsupported method " + method + "; one of " + METHODS);
        };
    try {
      JsonFormat.parser().merge(json, builder);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException("not a " + method + " request: " + e.getMessage(), e);
    }
    return builder.build().toByteArray();
  }

  /** The effect, lower case ({@code allow}, {@code deny} ...). */
  public String effect() {
    return decision.effect().label();
  }

  /** The decision's line: {@code decision: deny by rule 'x': message}. */
  public String decisionLine() {
    return String.format(
        Locale.ROOT,
        "decision: %s by rule '%s'%s",
        effect(),
        decision.rule(),
        decision.refused() ? ": " + decision.message() : "");
  }

  /** Every line {@code policy explain} prints: one per fact, the decision, one per shadow decision. */
  public List<String> lines() {
    List<String> lines = new ArrayList<>();
    for (Fact f : facts) lines.add(f.toString());
    lines.add(decisionLine());
    decision.shadow().forEach(x -> lines.add("shadow: " + x));
    return lines;
  }
}
