package io.sparkgate.revoke;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.Principal;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.FakeTime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class RevocationsTest {
  @TempDir Path dir;
  private final FakeTime time = new FakeTime();

  private Revocations start(Optional<Path> state, Optional<Path> denied) throws Exception {
    return Revocations.start(new AuthConfig.Revocations(state, denied), null, time);
  }

  private static Principal principal(String name, String jti) {
    return new Principal(
        name,
        List.of("g"),
        Optional.empty(),
        Principal.Method.JWT,
        Optional.empty(),
        Optional.ofNullable(jti));
  }

  /** The stage's verdict on a call of {@code p}: null when it passes. */
  private static Status check(Revocations r, Principal p) {
    Call call = Call.of("ExecutePlan");
    call.principal(p);
    try {
      r.stage().open(call);
      return null;
    } catch (StatusException e) {
      assertEquals("revoked", call.decided().effect());
      return e.getStatus();
    }
  }

  @Test
  void principal_refusedExactlyByName_untilRestored_reasonNeverToTheClient() throws Exception {
    try (Revocations r = start(Optional.empty(), Optional.empty())) {
      List<String> heard = new CopyOnWriteArrayList<>();
      r.onRevoked(x -> heard.add(x.name()));
      assertEquals(null, check(r, principal("alice", null)));
      r.revoke(
          Revocation.Kind.PRINCIPAL,
          "alice",
          "secret incident 42",
          Optional.empty(),
          "ops",
          x -> {});
      Status refused = check(r, principal("alice", null));
      assertEquals(Status.Code.PERMISSION_DENIED, refused.getCode());
      assertEquals(
          "Sparkgate: access for 'alice' was revoked by an operator; ask your Spark administrators",
          refused.getDescription());
      assertEquals(null, check(r, principal("Alice", null)), "principals match exactly");
      assertEquals(null, check(r, principal("alice ", null)));
      Await.until("the listener told", () -> !heard.isEmpty());
      assertEquals(List.of("alice"), heard);
      assertEquals(1, r.refused(Revocation.Kind.PRINCIPAL));

      assertTrue(r.restore(Revocation.Kind.PRINCIPAL, "alice").isPresent());
      assertEquals(null, check(r, principal("alice", null)));
      assertTrue(r.restore(Revocation.Kind.PRINCIPAL, "alice").isEmpty());
    }
  }

  @Test
  void until_lapsesByItself() throws Exception {
    try (Revocations r = start(Optional.empty(), Optional.empty())) {
      Instant until = time.instant().plus(Duration.ofHours(1));
      r.revoke(Revocation.Kind.PRINCIPAL, "bob", "on leave", Optional.of(until), "ops", x -> {});
      Status refused = check(r, principal("bob", null));
      assertTrue(refused.getDescription().contains("until " + until), refused.getDescription());
      time.advance(Duration.ofMinutes(59));
      assertEquals(Status.Code.PERMISSION_DENIED, check(r, principal("bob", null)).getCode());
      time.advance(Duration.ofMinutes(1));
      assertEquals(null, check(r, principal("bob", null)));
      assertEquals(List.of(), r.active());
    }
  }

  @Test
  void token_refusedByJti_theSamePrincipalWithAnotherTokenPasses() throws Exception {
    try (Revocations r = start(Optional.empty(), Optional.empty())) {
      r.revoke(Revocation.Kind.TOKEN, "jti-1", "leaked", Optional.empty(), "ops", x -> {});
      Status refused = check(r, principal("carol", "jti-1"));
      assertEquals(Status.Code.UNAUTHENTICATED, refused.getCode());
      assertEquals(
          "Sparkgate: this token was revoked; sign in again for a new one",
          refused.getDescription());
      assertEquals(null, check(r, principal("carol", "jti-2")));
      assertEquals(null, check(r, principal("carol", null)));
      assertEquals(null, check(r, principal("jti-1", null)), "a token id is not a principal");
      assertEquals(1, r.refused(Revocation.Kind.TOKEN));
    }
  }

  @Test
  void authenticationOff_isNotChecked() throws Exception {
    try (Revocations r = start(Optional.empty(), Optional.empty())) {
      r.revoke(Revocation.Kind.PRINCIPAL, "anonymous", "x", Optional.empty(), "ops", x -> {});
      assertEquals(null, check(r, Principal.anonymous(Principal.Method.NONE)));
      assertEquals(
          Status.Code.PERMISSION_DENIED,
          check(r, Principal.anonymous(Principal.Method.ANONYMOUS)).getCode());
    }
  }

  @Test
  void stateFile_keepsRevocationsAcrossARestart_andABadFileStopsTheStart() throws Exception {
    Path state = dir.resolve("revocations.json");
    try (Revocations r = start(Optional.of(state), Optional.empty())) {
      r.revoke(Revocation.Kind.PRINCIPAL, "dave", "left", Optional.empty(), "ops", x -> {});
      r.revoke(Revocation.Kind.TOKEN, "t-9", "leaked", Optional.empty(), "ops", x -> {});
      r.revoke(Revocation.Kind.PRINCIPAL, "erin", "x", Optional.empty(), "ops", x -> {});
      r.restore(Revocation.Kind.PRINCIPAL, "erin");
      assertEquals("file " + state, r.keptIn());
    }
    try (Revocations again = start(Optional.of(state), Optional.empty())) {
      Revocation dave = again.principal("dave").orElseThrow();
      assertEquals("left", dave.reason());
      assertEquals("ops", dave.operator());
      assertTrue(again.token("t-9").isPresent());
      assertTrue(again.principal("erin").isEmpty());
    }
    Files.writeString(state, "{\"not\": \"a list\"}");
    Exception e = assertThrows(Exception.class, () -> start(Optional.of(state), Optional.empty()));
    assertTrue(e.getMessage().contains("auth.revocations.state_file"), e.getMessage());
  }

  @Test
  void stateFile_thatCannotBeWritten_revokesNothing() throws Exception {
    Path state = dir.resolve("gone").resolve("revocations.json");
    try (Revocations r = start(Optional.of(state), Optional.empty())) {
      assertThrows(
          RuntimeException.class,
          () -> r.revoke(Revocation.Kind.PRINCIPAL, "x", "y", Optional.empty(), "ops", k -> {}));
      assertTrue(r.principal("x").isEmpty(), "not kept, so not claimed");
    }
  }

  @Test
  void deniedJtiFile_refusesItsIds_andIsReReadWhenItChanges() throws Exception {
    Path denied = dir.resolve("denied.txt");
    Files.writeString(denied, "# leaked 2026-12-01\njti-a\n\n  jti-b   # from a ticket\n");
    try (Revocations r = start(Optional.empty(), Optional.of(denied))) {
      assertEquals(2, r.deniedTokens());
      assertEquals(Status.Code.UNAUTHENTICATED, check(r, principal("x", "jti-a")).getCode());
      assertEquals(Status.Code.UNAUTHENTICATED, check(r, principal("x", "jti-b")).getCode());
      assertEquals(null, check(r, principal("x", "jti-c")));
      Files.writeString(denied, "jti-c\n");
      Files.setLastModifiedTime(
          denied, java.nio.file.attribute.FileTime.from(Instant.now().plus(Duration.ofSeconds(5))));
      Await.until("the file re-read", () -> r.token("jti-c").isPresent());
      assertEquals(null, check(r, principal("x", "jti-a")));
      assertEquals(Status.Code.UNAUTHENTICATED, check(r, principal("x", "jti-c")).getCode());
    }
  }

  @Test
  void anotherReplicasRevocation_isHeardThroughTheStore() throws Exception {
    MemoryStore shared = new MemoryStore(Optional.empty());
    Revocations one = new Revocations(shared, "memory", null, time);
    Revocations two = new Revocations(shared, "memory", null, time);
    List<String> heard = new CopyOnWriteArrayList<>();
    two.onRevoked(x -> heard.add(x.name() + " by " + x.operator()));
    two.refresh(); // its first read, at start: nothing to act on yet
    one.revoke(Revocation.Kind.PRINCIPAL, "frank", "x", Optional.empty(), "op-1", x -> {});
    assertFalse(two.principal("frank").isPresent(), "not polled yet");
    two.refresh();
    assertTrue(two.principal("frank").isPresent());
    Await.until("two told", () -> heard.size() == 1);
    assertEquals(List.of("frank by op-1"), heard);
    two.refresh();
    // Restored and revoked again between two polls: a new revocation, acted on again.
    one.restore(Revocation.Kind.PRINCIPAL, "frank");
    time.advance(Duration.ofSeconds(1));
    one.revoke(Revocation.Kind.PRINCIPAL, "frank", "again", Optional.empty(), "op-2", x -> {});
    two.refresh();
    Await.until("two told again", () -> heard.contains("frank by op-2"));
    assertEquals(List.of("frank by op-1", "frank by op-2"), heard);
    one.close();
    two.close();
  }
}
