package io.sparkgate.inspect;

import static io.sparkgate.testing.WireBytes.concat;
import static io.sparkgate.testing.WireBytes.field;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Message;
import io.sparkgate.proto.spark.Base;
import io.sparkgate.proto.spark.CompressionCodec;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.InterruptRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.ReattachOptions;
import io.sparkgate.proto.spark.ReleaseExecuteRequest;
import io.sparkgate.proto.spark.ResultChunkingOptions;
import io.sparkgate.proto.spark.UserContext;
import java.io.IOException;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The head every stage after authentication reads, against what protobuf-java parses and what Spark then
 * reads from the parse (its reattachable test, the oneofs' last members), on random requests of every method,
 * their corruptions, and encodings no client writes.
 */
final class RequestHeadTest {
  @Test
  void random_requests_and_their_corruptions_read_as_protobuf_parses_them() throws IOException {
    Random random = new Random(11);
    List<MethodDescriptor> methods =
        Base.getDescriptor().findServiceByName("SparkConnectService").getMethods();
    int compared = 0;
    for (int i = 0; i < 600; i++) {
      MethodDescriptor method = methods.get(random.nextInt(methods.size()));
      Message prototype = Requests.prototype(method.getName());
      byte[] bytes = new EncodedWalkTest.RandomMessages(random).of(prototype).toByteArray();
      compared += assertReadAsParsed(method.getName(), prototype, bytes);
      for (int k = 0; k < 4; k++) {
        compared +=
            assertReadAsParsed(method.getName(), prototype, EncodedWalkTest.corrupt(bytes, random));
      }
    }
    assertTrue(compared > 1500, "most requests parse: " + compared);
  }

  @Test
  void theUser_isTheLastDeclared_andAUserContextWithoutOneKeepsTheEarlier() {
    byte[] request =
        concat(
            ExecutePlanRequest.newBuilder().setSessionId("s-0").build().toByteArray(),
            ExecutePlanRequest.newBuilder()
                .setSessionId("s-1")
                .setUserContext(UserContext.newBuilder().setUserId("alice"))
                .build()
                .toByteArray(),
            ExecutePlanRequest.newBuilder()
                .setUserContext(UserContext.newBuilder().setUserName("x"))
                .build()
                .toByteArray());
    RequestHead head = RequestHead.read("ExecutePlan", request);
    assertEquals("s-1", head.sessionId());
    assertEquals("alice", head.userId());
    assertEquals("bob", head.withUserId("bob").userId());
  }

  @Test
  void reattachable_whenAnyOptionAsksForIt_asSparkReadsTheList() {
    byte[] on = option(ReattachOptions.newBuilder().setReattachable(true));
    byte[] off = option(ReattachOptions.newBuilder().setReattachable(false));
    byte[] chunking =
        field(
            ExecutePlanRequest.RequestOption.RESULT_CHUNKING_OPTIONS_FIELD_NUMBER,
            ResultChunkingOptions.getDefaultInstance().toByteArray());
    // A later option saying false does not undo an earlier one (Spark: exists).
    assertReattachable(true, concat(on, off));
    assertReattachable(true, concat(off, on));
    assertReattachable(false, off);
    // Within one option, a later member of its oneof replaces the reattach options.
    byte[] replaced =
        field(
            ExecutePlanRequest.REQUEST_OPTIONS_FIELD_NUMBER,
            concat(reattach(ReattachOptions.newBuilder().setReattachable(true)), chunking));
    assertReattachable(false, replaced);
    // Reattach options given twice in one option merge: a false written out wins, an empty one
    // keeps true.
    byte[] first = reattach(ReattachOptions.newBuilder().setReattachable(true));
    byte[] writtenFalse =
        field(
            ExecutePlanRequest.RequestOption.REATTACH_OPTIONS_FIELD_NUMBER,
            new byte[] {0x08, 0x00});
    byte[] empty = reattach(ReattachOptions.newBuilder());
    assertReattachable(
        false, field(ExecutePlanRequest.REQUEST_OPTIONS_FIELD_NUMBER, concat(first, writtenFalse)));
    assertReattachable(
        true, field(ExecutePlanRequest.REQUEST_OPTIONS_FIELD_NUMBER, concat(first, empty)));
  }

  @Test
  void releaseInterruptAndConfig_keepTheLastMemberOfTheirOneof() throws IOException {
    byte[] release =
        concat(
            ReleaseExecuteRequest.newBuilder()
                .setReleaseAll(ReleaseExecuteRequest.ReleaseAll.getDefaultInstance())
                .build()
                .toByteArray(),
            ReleaseExecuteRequest.newBuilder()
                .setReleaseUntil(ReleaseExecuteRequest.ReleaseUntil.newBuilder().setResponseId("r"))
                .build()
                .toByteArray());
    assertEquals(
        ReleaseExecuteRequest.ReleaseCase.RELEASE_UNTIL,
        RequestHead.read("ReleaseExecute", release).release());
    // An operation id replaced by a tag: the interrupt names no operation.
    byte[] interrupt =
        concat(
            InterruptRequest.newBuilder()
                .setInterruptType(InterruptRequest.InterruptType.INTERRUPT_TYPE_OPERATION_ID)
                .setOperationId("op-1")
                .build()
                .toByteArray(),
            InterruptRequest.newBuilder().setOperationTag("t").build().toByteArray());
    RequestHead head = RequestHead.read("Interrupt", interrupt);
    assertEquals(InterruptRequest.InterruptType.INTERRUPT_TYPE_OPERATION_ID, head.interrupt());
    assertEquals("", head.operationId());
    assertEquals(InterruptRequest.parseFrom(interrupt).getOperationId(), head.operationId());
    // A type this build does not know.
    assertEquals(
        InterruptRequest.InterruptType.UNRECOGNIZED,
        RequestHead.read("Interrupt", new byte[] {0x20, 0x09}).interrupt());
    // A Config read, then a set: the operations merge, and the set is what the server runs.
    byte[] getAll =
        ConfigRequest.newBuilder()
            .setOperation(
                ConfigRequest.Operation.newBuilder()
                    .setGetAll(ConfigRequest.GetAll.getDefaultInstance()))
            .build()
            .toByteArray();
    byte[] set =
        ConfigRequest.newBuilder()
            .setOperation(
                ConfigRequest.Operation.newBuilder().setSet(ConfigRequest.Set.getDefaultInstance()))
            .build()
            .toByteArray();
    RequestHead c = RequestHead.read("Config", concat(getAll, set));
    assertEquals(ConfigRequest.Operation.OpTypeCase.SET, c.config());
    assertFalse(c.readsConfig());
    assertTrue(RequestHead.read("Config", concat(set, getAll)).readsConfig());
  }

  @Test
  void thePlan_itsSizeAndCompression() {
    Plan compressed =
        Plan.newBuilder()
            .setCompressedOperation(
                Plan.CompressedOperation.newBuilder()
                    .setData(ByteString.copyFromUtf8("zzz"))
                    .setOpType(Plan.CompressedOperation.OpType.OP_TYPE_RELATION)
                    .setCompressionCodec(CompressionCodec.COMPRESSION_CODEC_ZSTD))
            .build();
    RequestHead head =
        RequestHead.read(
            "ExecutePlan",
            ExecutePlanRequest.newBuilder().setPlan(compressed).build().toByteArray());
    assertEquals(compressed.getSerializedSize(), head.planBytes());
    assertEquals("zstd", head.planCompression());
    Plan plain =
        Plan.newBuilder().setRoot(io.sparkgate.proto.spark.Relation.getDefaultInstance()).build();
    byte[] thenPlain =
        concat(
            ExecutePlanRequest.newBuilder().setPlan(compressed).build().toByteArray(),
            ExecutePlanRequest.newBuilder().setPlan(plain).build().toByteArray());
    assertEquals("", RequestHead.read("ExecutePlan", thenPlain).planCompression());
  }

  @Test
  void garbage_andUnknownMethods_readAsNone() {
    assertFalse(RequestHead.read("ExecutePlan", new byte[] {(byte) 0x0a, (byte) 0xff}).readable());
    assertEquals(RequestHead.NONE, RequestHead.read("NoSuchMethod", new byte[0]));
    assertTrue(RequestHead.read("ExecutePlan", new byte[0]).readable());
  }

  /** Compares where protobuf parses; returns 1 when it did. */
  private static int assertReadAsParsed(String method, Message prototype, byte[] bytes)
      throws IOException {
    Message parsed;
    try {
      parsed = prototype.getParserForType().parseFrom(bytes);
    } catch (IOException e) {
      return 0;
    }
    RequestHead head = RequestHead.read(method, bytes);
    // The plan's size is the bytes sent, which a re-encoding need not repeat: thePlan_... checks
    // it.
    assertEquals(
        expected(parsed, head.planBytes()),
        head,
        () -> method + " " + java.util.Arrays.toString(bytes));
    return 1;
  }

  /** What Spark reads from the parsed request. */
  private static RequestHead expected(Message m, long planBytes) {
    boolean reattachable =
        m instanceof ExecutePlanRequest e
            && e.getRequestOptionsList().stream()
                .anyMatch(o -> o.hasReattachOptions() && o.getReattachOptions().getReattachable());
    String compression =
        m instanceof ExecutePlanRequest e && e.getPlan().hasCompressedOperation()
            ? codec(e.getPlan().getCompressedOperation().getCompressionCodecValue())
            : "";
    return new RequestHead(
        str(m, "session_id"),
        m.getDescriptorForType().findFieldByName("user_context") == null
            ? ""
            : str(
                (Message) m.getField(m.getDescriptorForType().findFieldByName("user_context")),
                "user_id"),
        str(m, "operation_id"),
        str(m, "client_type"),
        str(m, "client_observed_server_side_session_id"),
        str(m, "new_session_id"),
        reattachable,
        m instanceof ReleaseExecuteRequest r
            ? r.getReleaseCase()
            : ReleaseExecuteRequest.ReleaseCase.RELEASE_NOT_SET,
        m instanceof InterruptRequest r
            ? r.getInterruptType()
            : InterruptRequest.InterruptType.INTERRUPT_TYPE_UNSPECIFIED,
        m instanceof ConfigRequest c
            ? c.getOperation().getOpTypeCase()
            : ConfigRequest.Operation.OpTypeCase.OPTYPE_NOT_SET,
        planBytes,
        compression,
        true);
  }

  private static String codec(int value) {
    CompressionCodec c = CompressionCodec.forNumber(value);
    return c == null
        ? "codec " + value
        : c.name().replace("COMPRESSION_CODEC_", "").toLowerCase(java.util.Locale.ROOT);
  }

  private static String str(Message m, String name) {
    FieldDescriptor f = m.getDescriptorForType().findFieldByName(name);
    if (f == null || (f.hasPresence() && !m.hasField(f))) return "";
    return (String) m.getField(f);
  }

  private static byte[] reattach(ReattachOptions.Builder options) {
    return field(
        ExecutePlanRequest.RequestOption.REATTACH_OPTIONS_FIELD_NUMBER,
        options.build().toByteArray());
  }

  private static byte[] option(ReattachOptions.Builder options) {
    return field(ExecutePlanRequest.REQUEST_OPTIONS_FIELD_NUMBER, reattach(options));
  }

  private static void assertReattachable(boolean expected, byte[] request) {
    assertEquals(expected, RequestHead.read("ExecutePlan", request).reattachable());
    try {
      ExecutePlanRequest parsed = ExecutePlanRequest.parseFrom(request);
      assertEquals(
          expected,
          parsed.getRequestOptionsList().stream()
              .anyMatch(o -> o.hasReattachOptions() && o.getReattachOptions().getReattachable()),
          "Spark reads it so");
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
