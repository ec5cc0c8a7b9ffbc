package io.sparkgate.call;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.WireFormat;
import io.sparkgate.forward.Payload;
import io.sparkgate.proto.spark.ExecutePlanResponse;
import java.io.IOException;

/**
 * Reads whether Spark's answer to an ExecutePlan says every result was sent (a ResultComplete), for the
 * stages that learn from a finished operation: the session tracker and the quota ledger. Responses only; the
 * request's own fields are in the call's head. Stateless.
 */
public final class Answers {
  private static final int RESULT_COMPLETE = ExecutePlanResponse.RESULT_COMPLETE_FIELD_NUMBER;

  /** A small response that says all results were sent is read in place from its first buffer. */
  private static final int HEAD_BYTES = 256;

  private static final Payload.Reader<Boolean> RESULT_COMPLETE_READER = Answers::resultComplete;

  /** By field number: the members of ExecutePlanResponse's response_type oneof. */
  private static final boolean[] RESPONSE_TYPE = responseTypes();

  private Answers() {}

  /**
   * True if an ExecutePlanResponse (or a reattached one) is the ResultComplete that ends a successful
   * reattachable execution. Unreadable reads as no: a change is then not applied, a quota slot freed by its
   * lease.
   */
  public static boolean resultComplete(Payload response) {
    try {
      Boolean complete = response.readHead(HEAD_BYTES, RESULT_COMPLETE_READER);
      return complete != null && complete;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Looks at top-level tags only, and stops at the first member of the response_type oneof: a result batch
   * (field 2) comes before anything it would have to skip, so it costs a few bytes of reading. Null when the
   * bytes shown end first: the payload then shows the whole message.
   */
  private static Boolean resultComplete(CodedInputStream in) throws IOException {
    try {
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        int field = WireFormat.getTagFieldNumber(tag);
        if (field == RESULT_COMPLETE) return true;
        if (responseType(field)) return false;
        in.skipField(tag);
      }
      return false;
    } catch (InvalidProtocolBufferException truncated) {
      return null;
    }
  }

  private static boolean responseType(int field) {
    return field < RESPONSE_TYPE.length && RESPONSE_TYPE[field];
  }

  private static boolean[] responseTypes() {
    var oneof =
        ExecutePlanResponse.getDescriptor()
            .findFieldByNumber(RESULT_COMPLETE)
            .getRealContainingOneof();
    int max = oneof.getFields().stream().mapToInt(f -> f.getNumber()).max().orElse(0);
    boolean[] members = new boolean[max + 1];
    oneof.getFields().forEach(f -> members[f.getNumber()] = true);
    return members;
  }
}
