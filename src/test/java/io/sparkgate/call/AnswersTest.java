package io.sparkgate.call;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.sparkgate.forward.Payload;
import io.sparkgate.proto.spark.DataType;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** A ResultComplete is found at the top level, and a result batch is not read past its start. */
final class AnswersTest {
  @Test
  void resultComplete_isFoundAtTheTopLevel_andABatchIsNotReadPastItsStart() {
    ExecutePlanResponse complete =
        ExecutePlanResponse.newBuilder()
            .setSessionId("s")
            .setOperationId("op")
            .setResultComplete(ExecutePlanResponse.ResultComplete.getDefaultInstance())
            .build();
    assertTrue(Answers.resultComplete(Payload.of(complete.toByteArray())));
    byte[] batch =
        ExecutePlanResponse.newBuilder()
            .setSessionId("s")
            .setArrowBatch(
                ExecutePlanResponse.ArrowBatch.newBuilder()
                    .setRowCount(3)
                    .setData(ByteString.copyFrom(new byte[4096])))
            .build()
            .toByteArray();
    assertFalse(Answers.resultComplete(Payload.of(batch)));
    assertFalse(
        Answers.resultComplete(
            Payload.of(
                ExecutePlanResponse.newBuilder()
                    .setSessionId("s")
                    .setSchema(DataType.getDefaultInstance())
                    .build()
                    .toByteArray())));
    // A batch cut short after its first bytes: the reader stops at it and never sees the cut.
    assertFalse(Answers.resultComplete(Payload.of(Arrays.copyOf(batch, 60))));
    assertFalse(Answers.resultComplete(Payload.of(new byte[] {(byte) 0x82})), "malformed");
  }
}
