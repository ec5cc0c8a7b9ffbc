package io.sparkgate.quota;

import static io.sparkgate.quota.QuotaCalls.batch;
import static io.sparkgate.quota.QuotaCalls.execute;
import static io.sparkgate.quota.QuotaCalls.limits;
import static io.sparkgate.quota.QuotaCalls.open;
import static io.sparkgate.quota.QuotaCalls.principal;
import static io.sparkgate.quota.QuotaCalls.quotas;
import static io.sparkgate.quota.QuotaCalls.resultComplete;
import static io.sparkgate.quota.QuotaCalls.uuid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Principal;
import io.sparkgate.config.QuotasConfig.Limits;
import io.sparkgate.quota.QuotaCalls.Open;
import io.sparkgate.testing.FakeTime;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * concurrent_operations: an ExecutePlan holds a slot from its first message until its operation is over, as
 * each of the signals Spark Connect gives says, or until its lease runs out; on a fake clock.
 */
final class OperationQuotaTest {
  private static final Duration LEASE = Duration.ofMinutes(1);

  private final FakeTime time = new FakeTime();
  private final Principal alice = principal("alice", "acme");
  private final String session = uuid();

  private QuotaStage stage(int perPrincipal, int perTenant) {
    return QuotaStage.unscheduled(
        quotas(limits(perPrincipal, 0, 0, 0), limits(perTenant, 0, 0, 0), LEASE),
        Optional.empty(),
        time);
  }

  /** Starts a reattachable ExecutePlan of {@code operation}; the open call, or null if refused. */
  private Open start(QuotaStage stage, Principal who, String operation) throws StatusException {
    return start(stage, who, operation, true);
  }

  private Open start(QuotaStage stage, Principal who, String operation, boolean reattachable)
      throws StatusException {
    Open call = open(stage, "ExecutePlan", who);
    StatusException refused = call.refused(execute(who, session, operation, reattachable));
    return refused == null ? call : null;
  }

  private boolean admits(QuotaStage stage, Principal who) throws StatusException {
    return start(stage, who, uuid()) != null;
  }

  @Test
  void aThirdOperation_waitsForOneOfTwo_toComplete() throws Exception {
    QuotaStage stage = stage(2, 0);
    String first = uuid();
    Open one = start(stage, alice, first);
    Open two = start(stage, alice, uuid());
    assertNotNull(one);
    assertNotNull(two);
    assertEquals(2, stage.heldOperations());
    assertNull(start(stage, alice, uuid()));
    assertEquals(1L, stage.refusals().get("per_principal.concurrent_operations"));

    one.respond(batch(session, first)); // results say nothing of the end
    assertNull(start(stage, alice, uuid()));
    one.respond(resultComplete(session, first));
    assertEquals(1, stage.heldOperations());
    assertNotNull(start(stage, alice, uuid()));
    one.close(Status.OK); // the stream's end after its result_complete changes nothing
    assertNull(start(stage, alice, uuid()));
  }

  @Test
  void releaseAll_freesTheSlot_releaseUntilDoesNot() throws Exception {
    QuotaStage stage = stage(1, 0);
    String op = uuid();
    start(stage, alice, op).close(Status.CANCELLED); // detached; the operation runs on
    assertNull(start(stage, alice, uuid()));
    open(stage, "ReleaseExecute", alice).send(QuotaCalls.releaseUntil(alice, session, op));
    assertNull(start(stage, alice, uuid()));
    open(stage, "ReleaseExecute", alice).send(QuotaCalls.releaseAll(alice, session, op));
    assertNotNull(start(stage, alice, uuid()));
  }

  @Test
  void interruptingTheOperation_freesItsSlot() throws Exception {
    QuotaStage stage = stage(1, 0);
    String op = uuid();
    Open running = start(stage, alice, op);
    open(stage, "Interrupt", alice).send(QuotaCalls.interruptTag(alice, session, "nightly"));
    assertNull(start(stage, alice, uuid()), "this replica does not know tags: the lease will");
    open(stage, "Interrupt", alice).send(QuotaCalls.interruptOperation(alice, session, op));
    assertNotNull(start(stage, alice, uuid()));
    running.close(Status.INTERNAL); // its stream then ends with the cancellation: nothing more
    assertNull(start(stage, alice, uuid()));
  }

  @Test
  void interruptingAllOfASession_orReleasingIt_freesItsOperationsOnly() throws Exception {
    QuotaStage stage = stage(3, 0);
    String other = uuid();
    start(stage, alice, uuid());
    start(stage, alice, uuid());
    Open elsewhere = open(stage, "ExecutePlan", alice);
    elsewhere.send(execute(alice, other, uuid(), true));
    assertEquals(3, stage.heldOperations());
    open(stage, "Interrupt", alice).send(QuotaCalls.interruptAll(alice, session));
    assertEquals(1, stage.heldOperations(), "the other session's operation holds on");
    open(stage, "ReleaseSession", alice).send(QuotaCalls.releaseSession(alice, other));
    assertEquals(0, stage.heldOperations());
  }

  @Test
  void anOperationThatFails_freesItsSlot_aCancelledStreamDoesNot() throws Exception {
    QuotaStage stage = stage(1, 0);
    start(stage, alice, uuid()).close(Status.INTERNAL.withDescription("[DIVIDE_BY_ZERO] ..."));
    Open detached = start(stage, alice, uuid());
    assertNotNull(detached);
    detached.close(Status.CANCELLED);
    assertNull(start(stage, alice, uuid()), "a reattachable operation outlives its stream");
  }

  @Test
  void aStreamCutOrReplaced_isNotTheOperationsEnd() throws Exception {
    QuotaStage stage = stage(1, 0);
    Open cut = start(stage, alice, uuid());
    cut.close(Status.UNAVAILABLE);
    assertNull(start(stage, alice, uuid()));
    assertEquals(1, stage.heldOperations());

    QuotaStage other = stage(1, 0);
    start(other, alice, uuid())
        .close(
            Status.INTERNAL.withDescription(
                "[INVALID_CURSOR.DISCONNECTED] The cursor has been disconnected by the server."));
    assertNull(start(other, alice, uuid()));
  }

  @Test
  void aStreamThatEndsWithoutResultComplete_keepsTheSlot_untilTheLeaseRunsOut() throws Exception {
    QuotaStage stage = stage(1, 0);
    start(stage, alice, uuid()).close(Status.OK); // the server's stream time was up: reattach
    stage.tick();
    time.advance(LEASE.minusSeconds(1));
    stage.tick();
    assertNull(start(stage, alice, uuid()));
    time.advance(Duration.ofSeconds(1));
    assertNotNull(start(stage, alice, uuid()), "nobody reattached within the lease");
  }

  @Test
  void aReattach_renewsTheSlot_ratherThanTakingAnother() throws Exception {
    QuotaStage stage = stage(1, 0);
    String op = uuid();
    start(stage, alice, op).close(Status.CANCELLED);
    time.advance(LEASE.minusSeconds(1));
    Open reattached = open(stage, "ReattachExecute", alice);
    reattached.send(QuotaCalls.reattach(alice, session, op));
    assertEquals(1, stage.heldOperations(), "the same operation, not a second one");
    for (int i = 0; i < 10; i++) { // an open stream is renewed however long it lasts
      time.advance(LEASE.dividedBy(3));
      stage.tick();
      assertNull(start(stage, alice, uuid()));
    }
    reattached.close(Status.CANCELLED);
    time.advance(LEASE.minusSeconds(1));
    assertNull(start(stage, alice, uuid()));
    time.advance(Duration.ofSeconds(1));
    assertNotNull(start(stage, alice, uuid()));
  }

  @Test
  void aReattachedStream_endsTheOperation_asTheFirstOneWould() throws Exception {
    QuotaStage stage = stage(1, 0);
    String op = uuid();
    start(stage, alice, op).close(Status.CANCELLED);
    Open reattached = open(stage, "ReattachExecute", alice);
    reattached.send(QuotaCalls.reattach(alice, session, op));
    reattached.respond(batch(session, op)).respond(resultComplete(session, op));
    assertNotNull(start(stage, alice, uuid()));
  }

  @Test
  void anOperationStartedElsewhere_isTakenOverByItsReattach() throws Exception {
    QuotaStage stage = stage(1, 0);
    Open reattached = open(stage, "ReattachExecute", alice);
    reattached.send(QuotaCalls.reattach(alice, session, uuid()));
    assertEquals(1, stage.heldOperations());
    assertNull(start(stage, alice, uuid()), "it runs, so it counts");
    reattached.close(Status.INTERNAL.withDescription("[INVALID_HANDLE.OPERATION_NOT_FOUND]"));
    assertNotNull(start(stage, alice, uuid()));
  }

  @Test
  void aRetriedExecutePlan_ofTheSameOperation_takesNoSecondSlot() throws Exception {
    QuotaStage stage = stage(1, 0);
    String op = uuid();
    start(stage, alice, op).close(Status.UNAVAILABLE);
    assertNotNull(start(stage, alice, op));
    assertEquals(1, stage.heldOperations());
  }

  @Test
  void aNonReattachableOperation_endsWithItsStream_whateverItsStatus() throws Exception {
    QuotaStage stage = stage(1, 0);
    start(stage, alice, uuid(), false).close(Status.OK);
    start(stage, alice, uuid(), false).close(Status.CANCELLED);
    assertNotNull(start(stage, alice, uuid(), false));
  }

  @Test
  void anOperationWithoutAnId_holdsItsSlotUntilItsCallEnds() throws Exception {
    QuotaStage stage = stage(1, 0);
    Open unnamed = start(stage, alice, null); // the server makes its id up
    assertNull(start(stage, alice, null));
    unnamed.close(Status.CANCELLED);
    assertNotNull(start(stage, alice, null));
  }

  @Test
  void theTenantsSlots_areSharedByItsPrincipals() throws Exception {
    QuotaStage stage = stage(2, 3);
    Principal bob = principal("bob", "acme");
    Principal carol = principal("carol", "globex");
    assertNotNull(start(stage, alice, uuid()));
    assertNotNull(start(stage, alice, uuid()));
    assertNull(start(stage, alice, uuid()), "alice's own limit");
    assertNotNull(start(stage, bob, uuid()));
    assertNull(start(stage, bob, uuid()), "acme's limit");
    assertEquals(1L, stage.refusals().get("per_tenant.concurrent_operations"));
    assertNotNull(start(stage, carol, uuid()), "another tenant");
    assertNotNull(start(stage, carol, uuid()));
  }

  @Test
  void aSlotRefusedByTheTenant_isNotKeptByThePrincipal() throws Exception {
    QuotaStage stage = stage(2, 1);
    Principal bob = principal("bob", "acme");
    Open bobs = start(stage, bob, uuid());
    assertNull(start(stage, alice, uuid()));
    bobs.close(Status.INTERNAL);
    assertNotNull(start(stage, alice, uuid()));
    assertEquals(1, stage.heldOperations());
  }

  @Test
  void otherPrincipals_areUnaffected() throws Exception {
    QuotaStage stage = stage(1, 0);
    start(stage, alice, uuid());
    assertNull(start(stage, alice, uuid()));
    for (String name : new String[] {"bob", "carol"}) {
      assertNotNull(start(stage, principal(name, "acme"), uuid()), name);
    }
  }

  @Test
  void onlyExecutePlanTakesSlots() throws Exception {
    QuotaStage stage = stage(1, 0);
    start(stage, alice, uuid());
    open(stage, "Config", alice).send(QuotaCalls.configRequest(alice, session)); // not refused
    open(stage, "AnalyzePlan", alice).send(new byte[0]);
    assertEquals(1, stage.heldOperations());
  }

  @Test
  void limitsWithoutOperations_holdNothing() throws Exception {
    QuotaStage stage =
        QuotaStage.unscheduled(
            quotas(limits(0, 100, 0, 0), Limits.NONE, LEASE), Optional.empty(), time);
    for (int i = 0; i < 5; i++) start(stage, alice, uuid());
    assertEquals(0, stage.heldOperations());
  }

  @Test
  void idleAccounts_areDropped_andStartFullAgain() throws Exception {
    QuotaStage stage =
        QuotaStage.unscheduled(
            quotas(limits(1, 1, 1, 0), Limits.NONE, LEASE), Optional.empty(), time);
    start(stage, alice, uuid(), false).close(Status.OK);
    time.advance(Duration.ofMinutes(2));
    stage.tick();
    assertNotNull(start(stage, alice, uuid(), false));
  }
}
