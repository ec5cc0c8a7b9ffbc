package io.sparkgate.head;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Principal;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.proto.spark.AddArtifactsRequest;
import io.sparkgate.proto.spark.Base;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.SQL;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.WireBytes;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

final class UserContextRewriterTest {
  private static final Principal ALICE =
      new Principal("alice", List.of(), Optional.empty(), Principal.Method.JWT, Optional.empty());
  private final UserContextRewriter overwrite =
      new UserContextRewriter(
          AuthConfig.UserIdMismatch.OVERWRITE, AuthConfig.UserContextExtensions.DEFAULTS);
  private final UserContextRewriter reject =
      new UserContextRewriter(
          AuthConfig.UserIdMismatch.REJECT, AuthConfig.UserContextExtensions.DEFAULTS);

  /** The rewrite relies on this: checked against the generated descriptors, so a new Spark release cannot slip by. */
  @Test
  void protos_everyRequestHasUserContextAsField2() {
    Descriptors.ServiceDescriptor service =
        Base.getDescriptor().findServiceByName("SparkConnectService");
    int checked = 0;
    for (Descriptors.MethodDescriptor method : service.getMethods()) {
      Descriptors.FieldDescriptor field = method.getInputType().findFieldByNumber(2);
      assertEquals("user_context", field.getName(), method.getName());
      assertEquals(UserContext.getDescriptor(), field.getMessageType(), method.getName());
      checked++;
    }
    assertEquals(true, checked >= 12, "all 12 forwarded methods: " + checked);
  }

  /** A length-delimited field, as protobuf writes one (the shared builder, over a ByteString). */
  private static byte[] field(int number, ByteString value) {
    return WireBytes.field(number, value.toByteArray());
  }

  @Test
  void rewrite_onlyUserContextBytesChange() throws Exception {
    byte[] session = field(1, ByteString.copyFromUtf8("8c4f0f9e-3f0e-4d55-9b53-1a2b3c4d5e6f"));
    UserContext declared =
        UserContext.newBuilder()
            .setUserId("mallory")
            .setUserName("Mallory")
            .addExtensions(
                Any.newBuilder()
                    .setTypeUrl("type.googleapis.com/x.Evil")
                    .setValue(ByteString.copyFromUtf8("!")))
            .build();
    byte[] plan =
        field(
            3,
            Plan.newBuilder()
                .setRoot(Relation.newBuilder().setSql(SQL.newBuilder().setQuery("SELECT 1")))
                .build()
                .toByteString());
    // An unknown field (from a newer client) must survive byte for byte too.
    byte[] unknown = field(4242, ByteString.copyFrom(new byte[] {0, 1, 2, (byte) 0xff}));
    byte[] original = WireBytes.concat(session, field(2, declared.toByteString()), plan, unknown);

    byte[] rewritten = overwrite.rewrite(original, ALICE);

    UserContext expected = UserContext.newBuilder().setUserId("alice").setUserName("alice").build();
    assertArrayEquals(
        WireBytes.concat(session, field(2, expected.toByteString()), plan, unknown), rewritten);
    ExecutePlanRequest parsed = ExecutePlanRequest.parseFrom(rewritten);
    assertEquals("alice", parsed.getUserContext().getUserId());
    assertEquals(0, parsed.getUserContext().getExtensionsCount());
    assertEquals("SELECT 1", parsed.getPlan().getRoot().getSql().getQuery());
  }

  @Test
  void rewrite_unknownFieldsOfUserContext_dropped() throws Exception {
    // A field UserContext does not have (a newer client's, or one a plugin might read as identity).
    byte[] declared =
        WireBytes.concat(
            UserContext.newBuilder().setUserId("alice").build().toByteArray(),
            field(77, ByteString.copyFromUtf8("impersonate=bob")));
    byte[] original =
        WireBytes.concat(
            field(1, ByteString.copyFromUtf8("s")), field(2, ByteString.copyFrom(declared)));
    byte[] rewritten = reject.rewrite(original, ALICE);
    assertArrayEquals(
        WireBytes.concat(
            field(1, ByteString.copyFromUtf8("s")),
            field(
                2,
                UserContext.newBuilder()
                    .setUserId("alice")
                    .setUserName("alice")
                    .build()
                    .toByteString())),
        rewritten);
    assertEquals(
        0,
        ExecutePlanRequest.parseFrom(rewritten).getUserContext().getUnknownFields().asMap().size());
  }

  @Test
  void reject_readsTheLastUserIdOfEachDeclaredContext_asProtobufDoes() throws Exception {
    // Two user_id values in one context: protobuf keeps the last, and so must the check.
    byte[] twice =
        WireBytes.concat(
            field(1, ByteString.copyFromUtf8("alice")), field(1, ByteString.copyFromUtf8("bob")));
    StatusException e =
        assertThrows(
            StatusException.class,
            () -> reject.rewrite(field(2, ByteString.copyFrom(twice)), ALICE));
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    byte[] bobThenAlice =
        WireBytes.concat(
            field(1, ByteString.copyFromUtf8("bob")), field(1, ByteString.copyFromUtf8("alice")));
    assertEquals(
        "alice",
        ExecutePlanRequest.parseFrom(
                reject.rewrite(field(2, ByteString.copyFrom(bobThenAlice)), ALICE))
            .getUserContext()
            .getUserId());
    // Not UTF-8: refused as protobuf would refuse to parse it.
    byte[] badUtf8 = field(1, ByteString.copyFrom(new byte[] {(byte) 0xc3, 0x28}));
    StatusException bad =
        assertThrows(
            StatusException.class,
            () -> overwrite.rewrite(field(2, ByteString.copyFrom(badUtf8)), ALICE));
    assertEquals(Status.Code.INVALID_ARGUMENT, bad.getStatus().getCode());
  }

  @Test
  void rewrite_missingUserContext_appended() throws Exception {
    byte[] original =
        ExecutePlanRequest.newBuilder().setSessionId("s").setClientType("t").build().toByteArray();
    byte[] rewritten = overwrite.rewrite(original, ALICE);
    byte[] expectedTail =
        field(
            2,
            UserContext.newBuilder()
                .setUserId("alice")
                .setUserName("alice")
                .build()
                .toByteString());
    assertArrayEquals(WireBytes.concat(original, expectedTail), rewritten);
  }

  @Test
  void rewrite_repeatedUserContext_collapsedToOne() throws Exception {
    byte[] a = field(2, UserContext.newBuilder().setUserId("alice").build().toByteString());
    byte[] b = field(2, UserContext.newBuilder().setUserName("x").build().toByteString());
    byte[] c = field(2, UserContext.newBuilder().setUserName("y").build().toByteString());
    byte[] session = field(1, ByteString.copyFromUtf8("s"));
    byte[] clientType = field(4, ByteString.copyFromUtf8("t"));
    byte[] rewritten = overwrite.rewrite(WireBytes.concat(a, session, b, c, clientType), ALICE);
    assertArrayEquals(
        WireBytes.concat(
            field(
                2,
                UserContext.newBuilder()
                    .setUserId("alice")
                    .setUserName("alice")
                    .build()
                    .toByteString()),
            session,
            clientType),
        rewritten);
  }

  @Test
  void rewrite_addArtifactsChunk() throws Exception {
    byte[] original =
        AddArtifactsRequest.newBuilder()
            .setSessionId("s")
            .setUserContext(UserContext.newBuilder().setUserId("bob"))
            .setChunk(
                io.sparkgate.proto.spark.AddArtifactsRequest.ArtifactChunk.newBuilder()
                    .setData(ByteString.copyFrom(new byte[1000]))
                    .setCrc(7))
            .build()
            .toByteArray();
    AddArtifactsRequest parsed = AddArtifactsRequest.parseFrom(overwrite.rewrite(original, ALICE));
    assertEquals("alice", parsed.getUserContext().getUserId());
    assertEquals(1000, parsed.getChunk().getData().size());
  }

  @Test
  void reject_differingUserId_permissionDenied() throws Exception {
    byte[] bob =
        ExecutePlanRequest.newBuilder()
            .setUserContext(UserContext.newBuilder().setUserId("bob"))
            .build()
            .toByteArray();
    StatusException e = assertThrows(StatusException.class, () -> reject.rewrite(bob, ALICE));
    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    byte[] same =
        ExecutePlanRequest.newBuilder()
            .setUserContext(UserContext.newBuilder().setUserId("alice"))
            .build()
            .toByteArray();
    assertEquals(
        "alice",
        ExecutePlanRequest.parseFrom(reject.rewrite(same, ALICE)).getUserContext().getUserId());
    byte[] none = ExecutePlanRequest.newBuilder().setSessionId("s").build().toByteArray();
    assertEquals(
        "alice",
        ExecutePlanRequest.parseFrom(reject.rewrite(none, ALICE)).getUserContext().getUserId());
  }

  @Test
  void rewrite_malformed_invalidArgument() {
    StatusException e =
        assertThrows(
            StatusException.class, () -> overwrite.rewrite(new byte[] {0x12, 0x7f, 1}, ALICE));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    // user_context with the wrong wire type
    StatusException wrongType =
        assertThrows(StatusException.class, () -> overwrite.rewrite(new byte[] {0x10, 1}, ALICE));
    assertEquals(Status.Code.INVALID_ARGUMENT, wrongType.getStatus().getCode());
  }

  private static final String PIPELINE_URL =
      "type.googleapis.com/spark.connect.PipelineAnalysisContext";

  private static Any pipelineContext() {
    return Any.pack(
        io.sparkgate.proto.spark.PipelineAnalysisContext.newBuilder()
            .setDataflowGraphId("g-1")
            .setDefinitionPath("pipelines/flows.py")
            .build());
  }

  @Test
  void extensions_pipelineAnalysisContextKept_othersStripped() throws Exception {
    assertEquals(PIPELINE_URL, pipelineContext().getTypeUrl());
    UserContext declared =
        UserContext.newBuilder()
            .setUserId("alice")
            .addExtensions(Any.newBuilder().setTypeUrl("type.googleapis.com/x.Evil"))
            .addExtensions(pipelineContext())
            .addExtensions(
                Any.newBuilder()
                    .setTypeUrl("type.googleapis.com/x.Other")
                    .setValue(ByteString.copyFromUtf8("?")))
            .build();
    byte[] original =
        ExecutePlanRequest.newBuilder()
            .setSessionId("s")
            .setUserContext(declared)
            .build()
            .toByteArray();

    ExecutePlanRequest out = ExecutePlanRequest.parseFrom(overwrite.rewrite(original, ALICE));

    assertEquals(
        UserContext.newBuilder()
            .setUserId("alice")
            .setUserName("alice")
            .addExtensions(pipelineContext())
            .build(),
        out.getUserContext());
  }

  @Test
  void extensions_allowedFromEveryDeclaredContext_inOrder() throws Exception {
    Any second =
        Any.pack(
            io.sparkgate.proto.spark.PipelineAnalysisContext.newBuilder()
                .setDataflowGraphId("g-2")
                .build());
    byte[] original =
        WireBytes.concat(
            field(
                2,
                UserContext.newBuilder().addExtensions(pipelineContext()).build().toByteString()),
            field(1, ByteString.copyFromUtf8("s")),
            field(2, UserContext.newBuilder().addExtensions(second).build().toByteString()));

    UserContext out =
        ExecutePlanRequest.parseFrom(overwrite.rewrite(original, ALICE)).getUserContext();

    assertEquals(List.of(pipelineContext(), second), out.getExtensionsList());
    assertEquals("alice", out.getUserId());
  }

  @Test
  void extensions_refuseOthers_permissionDeniedNamingTheType() {
    UserContextRewriter refusing =
        new UserContextRewriter(
            AuthConfig.UserIdMismatch.OVERWRITE,
            new AuthConfig.UserContextExtensions(java.util.Set.of(PIPELINE_URL), true));
    byte[] original =
        ExecutePlanRequest.newBuilder()
            .setSessionId("s")
            .setUserContext(
                UserContext.newBuilder()
                    .addExtensions(pipelineContext())
                    .addExtensions(Any.newBuilder().setTypeUrl("type.googleapis.com/x.Evil")))
            .build()
            .toByteArray();

    StatusException e =
        assertThrows(StatusException.class, () -> refusing.rewrite(original, ALICE));

    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    assertEquals(true, e.getStatus().getDescription().contains("x.Evil"), e.getMessage());
    assertEquals(
        true,
        e.getStatus().getDescription().contains("auth.user_context_extensions"),
        e.getMessage());
  }

  @Test
  void extensions_emptyAllowList_stripsEvenThePipelineContext() throws Exception {
    UserContextRewriter none =
        new UserContextRewriter(
            AuthConfig.UserIdMismatch.OVERWRITE,
            new AuthConfig.UserContextExtensions(java.util.Set.of(), false));
    byte[] original =
        ExecutePlanRequest.newBuilder()
            .setSessionId("s")
            .setUserContext(UserContext.newBuilder().addExtensions(pipelineContext()))
            .build()
            .toByteArray();

    UserContext out = ExecutePlanRequest.parseFrom(none.rewrite(original, ALICE)).getUserContext();

    assertEquals(0, out.getExtensionsCount());
  }
}
