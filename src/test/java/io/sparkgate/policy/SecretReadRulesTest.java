package io.sparkgate.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.github.benmanes.caffeine.cache.Ticker;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.InspectStage;
import io.sparkgate.call.Pipeline;
import io.sparkgate.cli.CliPolicyCompiler;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.head.HeadStage;
import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Inspector;
import io.sparkgate.inspect.SessionTracker;
import io.sparkgate.proto.spark.Command;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.SqlCommand;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Reading secret settings with SQL, in every place a request carries SQL, through the inspect and decide
 * stages with the shipped policy: refused under the shipped rules (the backend's own token under the rule no
 * policy can drop), while ordinary reads pass.
 */
final class SecretReadRulesTest {
  private static final Policy SHARED =
      CliPolicyCompiler.get().compile(Path.of("policies/shared-server.yaml"));
  private static final Policy NOTHING =
      CliPolicyCompiler.get()
          .compile("empty.yaml", new java.io.StringReader("default: allow\nrules: []\n"));

  private static Call run(Policy policy, Plan plan) throws StatusException {
    SessionTracker sessions =
        new SessionTracker(
            () -> BackendProfile.UNKNOWN, Duration.ofMinutes(1), Ticker.systemTicker(), null);
    Pipeline stages =
        Pipeline.of(
            new HeadStage(AuthConfig.disabled()),
            InspectStage.full(new Inspector(), sessions),
            new DecideStage(
                new PolicyEngine(
                    () -> policy,
                    ProfileSource.fixed(
                        new BackendProfile("4.0.0", java.util.List.of(), Map.of(), null))),
                Map.of(),
                false));
    Call call = Call.of("ExecutePlan");
    stages
        .open(call)
        .onRequest(
            ExecutePlanRequest.newBuilder()
                .setSessionId("8c4f0f9e-3f0e-4d55-9b53-1a2b3c4d5e6f")
                .setPlan(plan)
                .build()
                .toByteArray());
    return call;
  }

  private static Plan sql(String query) {
    return Plan.newBuilder()
        .setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery(query)))
        .build();
  }

  @SuppressWarnings("deprecation") // SqlCommand.sql: what 3.5 clients send
  private static Plan sqlCommand35(String query) {
    return Plan.newBuilder()
        .setCommand(Command.newBuilder().setSqlCommand(SqlCommand.newBuilder().setSql(query)))
        .build();
  }

  private static Plan sqlCommandInput(String query) {
    return Plan.newBuilder()
        .setCommand(
            Command.newBuilder()
                .setSqlCommand(
                    SqlCommand.newBuilder()
                        .setInput(Relation.newBuilder().setSql(SQL.newBuilder().setQuery(query)))))
        .build();
  }

  private static String refusedBy(Policy policy, Plan plan) {
    Call[] seen = new Call[1];
    StatusException e =
        assertThrows(StatusException.class, () -> seen[0] = run(policy, plan), plan::toString);
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    return e.getStatus().getDescription();
  }

  @Test
  void secretReads_refusedWhereverTheSqlSits() {
    for (Plan plan :
        new Plan[] {
          sql("  set `my.db.password` ;"),
          sql("/* comment */ SET my.api.credential"),
          sql("\u017Fet my.db.password"),
          sqlCommand35("SET my.db.password"),
          sqlCommandInput("SET fs.s3a.secret.key")
        }) {
      String message = refusedBy(SHARED, plan);
      assertEquals(true, message.contains("'no-secret-reads'"), message);
    }
    assertEquals(true, refusedBy(SHARED, sql("set -v")).contains("'no-settings-listing'"));
    assertEquals(true, refusedBy(SHARED, sqlCommand35("SET")).contains("'no-settings-listing'"));
  }

  @Test
  void aSecretReadInsideExecuteImmediate_isRefused() {
    // The escape spells SET without its letters; the nested statement is read as Spark will read
    // it.
    refusedBy(SHARED, sql("EXECUTE IMMEDIATE '\\u0053ET my.db.password'"));
  }

  @Test
  void theBackendsOwnToken_isRefusedEvenByAPolicyWithoutRules() {
    for (Plan plan :
        new Plan[] {
          sql("SET spark.connect.authenticate.token"),
          sqlCommand35("set `spark.connect.authenticate.token`")
        }) {
      assertEquals(
          true, refusedBy(NOTHING, plan).contains("'" + PolicyEngine.BACKEND_TOKEN_RULE + "'"));
    }
  }

  @Test
  void ordinaryReads_pass() throws StatusException {
    assertEquals("allow", run(SHARED, sql("SET spark.sql.shuffle.partitions")).decided().effect());
    assertEquals("allow", run(SHARED, sql("SELECT 'SET x.password' AS s")).decided().effect());
    assertEquals(
        "allow",
        run(NOTHING, sql("SET my.db.password")).decided().effect(),
        "only the backend token is fixed");
  }
}
