package io.sparkgate.bench;

import io.grpc.Attributes;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.StatusException;
import io.sparkgate.auth.Authentication;
import io.sparkgate.call.Call;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Range;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.SetOperation;
import io.sparkgate.proto.spark.UserContext;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Inputs shared by the per-request micro-benchmarks (auth, inspection, policy, the stages): a JWT setup written
 * to a temporary directory, requests of chosen shapes, and calls as the proxy's pipeline makes them.
 */
public final class SecurityFixtures {
  public static final MethodDescriptor<byte[], byte[]> EXECUTE_PLAN =
      MethodDescriptor.newBuilder(
              BenchProtocol.RawMarshaller.INSTANCE, BenchProtocol.RawMarshaller.INSTANCE)
          .setFullMethodName(BenchProtocol.SERVICE + "/ExecutePlan")
          .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
          .build();
  public static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private SecurityFixtures() {}

  /** A directory with a JWKS file and a proxy configuration using it; the token signed for it. */
  public record Jwt(Path dir, ProxyConfig config, String token) {}

  /** JWT auth (and, when {@code policyFile} is set, that policy) in a ProxyConfig; token cache off when 0. */
  public static Jwt jwt(int tokenCacheEntries, Path policyFile) throws IOException {
    Path dir = Files.createTempDirectory("sparkgate-jmh");
    Path jwks = dir.resolve("jwks.json");
    String token = Endpoints.mintJwt(jwks);
    StringBuilder y = new StringBuilder();
    y.append("listen:\n  address: 127.0.0.1\n  port: 15002\n  plaintext: true\n");
    y.append("backend:\n  address: 127.0.0.1:15003\n");
    y.append("auth:\n  methods: [jwt]\n  jwt:\n    jwks_file: ").append(jwks).append('\n');
    y.append("    issuer: ").append(Endpoints.ISSUER).append('\n');
    y.append("    audience: ").append(Endpoints.AUDIENCE).append('\n');
    y.append("  token_cache:\n    max_entries: ").append(tokenCacheEntries).append('\n');
    if (policyFile != null) {
      y.append("policy:\n  file: ").append(policyFile).append('\n');
    }
    Path file = dir.resolve("sparkgate.yaml");
    Files.writeString(file, y.toString());
    return new Jwt(dir, ProxyConfig.load(file), token);
  }

  public static Metadata bearer(String token) {
    Metadata h = new Metadata();
    h.put(AUTHORIZATION, "Bearer " + token);
    return h;
  }

  /** A new ExecutePlan call with these headers, as the proxy's pipeline makes one. */
  public static Call call(Metadata headers) {
    return new Call("ExecutePlan", headers, Attributes.EMPTY);
  }

  /** An ExecutePlan call that the authenticate stage of {@code auth} let through with this token. */
  public static Call authenticated(Authentication auth, String token) {
    Call call = call(bearer(token));
    try {
      auth.stage().open(call);
    } catch (StatusException e) {
      throw new IllegalStateException("the benchmark token was refused: " + e.getStatus(), e);
    }
    return call;
  }

  /** An ExecutePlanRequest with this root relation, as a client sends it. */
  /** The facts of an ExecutePlan of {@code sql} on a fresh session, enriched by {@code engine}. */
  public static io.sparkgate.inspect.Facts enrichedSql(
      io.sparkgate.policy.PolicyEngine engine, String sql) {
    byte[] request =
        request(
            Relation.newBuilder()
                .setSql(io.sparkgate.proto.spark.SQL.newBuilder().setQuery(sql))
                .build());
    return engine.enrich(
        new io.sparkgate.inspect.Inspector()
            .inspect(
                "ExecutePlan",
                request,
                io.sparkgate.inspect.BackendProfile.UNKNOWN.freshSession()));
  }

  public static byte[] request(Relation root) {
    return ExecutePlanRequest.newBuilder()
        .setSessionId("00000000-0000-0000-0000-00000000beef")
        .setUserContext(UserContext.newBuilder().setUserId("bench").setUserName("bench"))
        .setClientType("sparkgate-bench")
        .setPlan(Plan.newBuilder().setRoot(root))
        .build()
        .toByteArray();
  }

  /** A balanced UNION ALL tree of range relations with {@code nodes} relations in all (odd counts exact). */
  public static Relation unionTree(int nodes) {
    if (nodes <= 1) {
      return Relation.newBuilder()
          .setRange(Range.newBuilder().setStart(0).setEnd(10).setStep(1))
          .build();
    }
    int rest = nodes - 1;
    int left = rest / 2;
    return Relation.newBuilder()
        .setSetOp(
            SetOperation.newBuilder()
                .setLeftInput(unionTree(Math.max(1, left)))
                .setRightInput(unionTree(Math.max(1, rest - left)))
                .setSetOpType(SetOperation.SetOpType.SET_OP_TYPE_UNION)
                .setIsAll(true))
        .build();
  }

  /** A SQL relation of about {@code chars} characters: a wide projection of arithmetic over one table. */
  public static Relation sql(int chars) {
    StringBuilder s = new StringBuilder("SELECT t.id");
    for (int i = 0; s.length() < chars - 40; i++) {
      s.append(", t.c").append(i % 50).append(" + ").append(i).append(" AS x").append(i);
    }
    s.append(" FROM sales.orders t WHERE t.id > 0");
    return Relation.newBuilder().setSql(SQL.newBuilder().setQuery(s.toString())).build();
  }
}
