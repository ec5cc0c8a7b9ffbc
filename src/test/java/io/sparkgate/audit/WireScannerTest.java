package io.sparkgate.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class WireScannerTest {
  private static final WireScanner RESPONSES =
      new WireScanner(
          ExecutePlanResponse.getDescriptor(),
          Set.of("server_side_session_id", "operation_id", "no_such_field"),
          "response_",
          true);

  /** A result batch; the ids the record wants are numbered after the batch, so they follow its data. */
  private static byte[] batch(long rows, int dataBytes) {
    return ExecutePlanResponse.newBuilder()
        .setSessionId("s")
        .setOperationId("op-1")
        .setServerSideSessionId("srv-1")
        .setArrowBatch(
            ExecutePlanResponse.ArrowBatch.newBuilder()
                .setRowCount(rows)
                .setData(ByteString.copyFrom(new byte[dataBytes])))
        .build()
        .toByteArray();
  }

  private static Map<String, Object> fields(CodedInputStream in, long[] rows) {
    Map<String, Object> out = new TreeMap<>();
    rows[0] = RESPONSES.scan(in, out::put);
    return out;
  }

  @Test
  void firstMessage_fieldsAfterTheBatch_andItsRows() {
    byte[] message = batch(1234, 2 << 20);
    long[] rows = new long[1];
    Map<String, Object> expected =
        Map.of("response_operation_id", "op-1", "response_server_side_session_id", "srv-1");
    assertEquals(expected, fields(CodedInputStream.newInstance(message), rows));
    assertEquals(1234, rows[0]);
    // The same through a small read-ahead over a stream, as adopted transport buffers are read.
    assertEquals(
        expected,
        fields(CodedInputStream.newInstance(new ByteArrayInputStream(message), 256), rows));
    assertEquals(1234, rows[0]);
  }

  @Test
  void laterMessages_rowsOnly_stopAtTheCount() throws Exception {
    byte[] message = batch(99, 1 << 20);
    ByteArrayInputStream stream = new ByteArrayInputStream(message);
    assertEquals(99L, RESPONSES.rowsOnly().read(CodedInputStream.newInstance(stream, 256)));
    // Stopped at the count, which precedes the data: nearly all of the message was never read.
    assertEquals(true, stream.available() > message.length - 1024);
  }

  /** Shown the first bytes of a message only (the first transport buffer), as Payload.readHead does. */
  private static Long rowsOfPrefix(byte[] message, int bytes) throws Exception {
    return RESPONSES
        .rowsOnly()
        .read(CodedInputStream.newInstance(ByteBuffer.wrap(message, 0, bytes).slice()));
  }

  @Test
  void laterMessages_rowsOnly_fromAPrefix_orNullWhenThePrefixEndsFirst() throws Exception {
    byte[] message = batch(99, 1 << 20);
    assertEquals(99L, rowsOfPrefix(message, 256));
    // Cut before the batch, inside its header, and inside the session id: not known, so null (not
    // 0).
    for (int cut : new int[] {2, 5, 8, 1}) {
      assertNull(rowsOfPrefix(message, cut), "cut at " + cut);
    }
  }

  @Test
  void laterMessages_rowsOnly_zeroRowsOrNoBatch() throws Exception {
    // Proto3 leaves a count of 0 out: a whole batch without one has 0 rows, a prefix of it is not
    // known.
    byte[] empty = batch(0, 100);
    assertEquals(0L, RESPONSES.rowsOnly().read(CodedInputStream.newInstance(empty)));
    assertNull(rowsOfPrefix(empty, 40));
    // No batch at all: null, which the caller counts as 0 once it has shown the whole message.
    byte[] none = ExecutePlanResponse.newBuilder().setOperationId("op-3").build().toByteArray();
    assertNull(RESPONSES.rowsOnly().read(CodedInputStream.newInstance(none)));
  }

  @Test
  void noBatch_noRows_andScannersThatDoNotCount() {
    byte[] message = ExecutePlanResponse.newBuilder().setOperationId("op-2").build().toByteArray();
    long[] rows = {-1};
    assertEquals(
        Map.of("response_operation_id", "op-2"),
        fields(CodedInputStream.newInstance(message), rows));
    assertEquals(0, rows[0]);

    WireScanner requests =
        new WireScanner(
            ExecutePlanRequest.getDescriptor(), Set.of("session_id", "client_type"), "", false);
    Map<String, Object> out = new TreeMap<>();
    byte[] request =
        ExecutePlanRequest.newBuilder()
            .setSessionId("s-9")
            .setClientType("t")
            .setOperationId("x")
            .build()
            .toByteArray();
    assertEquals(0, requests.scan(CodedInputStream.newInstance(request), out::put));
    assertEquals(Map.of("session_id", "s-9", "client_type", "t"), out);
    assertEquals(false, requests.countsRows());
  }

  @Test
  void malformed_keepsWhatWasReadBeforeTheFault_neverThrows() {
    byte[] message = batch(7, 100);
    // Cut inside the batch's data: the batch runs past the end, so neither it nor the ids after it
    // count.
    byte[] cut = Arrays.copyOf(message, message.length - 60);
    long[] rows = {-1};
    assertEquals(Map.of(), fields(CodedInputStream.newInstance(cut), rows));
    assertEquals(0, rows[0]);
    // Cut inside the server-side session id: the batch and the operation id before it were read.
    byte[] late = Arrays.copyOf(message, message.length - 2);
    assertEquals(
        Map.of("response_operation_id", "op-1"), fields(CodedInputStream.newInstance(late), rows));
    assertEquals(7, rows[0]);
  }
}
