package io.sparkgate.call;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import io.sparkgate.forward.Payload;
import java.io.IOException;

/**
 * Reads the few fields that say whether Spark answered an ExecutePlan successfully, skipping everything else
 * (the plan, result batches) without parsing it. Stateless.
 */
final class Answers {
  private Answers() {}

  /** ExecutePlanRequest.request_options, RequestOption.reattach_options, ReattachOptions.reattachable. */
  private static final int REQUEST_OPTIONS = 5;

  private static final int REATTACH_OPTIONS = 1;
  private static final int REATTACHABLE = 1;

  /** ExecutePlanResponse.result_complete. */
  private static final int RESULT_COMPLETE = 14;

  /**
   * True if an ExecutePlanRequest asks for a reattachable execution, whose stream Spark ends with a
   * ResultComplete on success. A request we cannot read counts as reattachable: its change is then applied
   * only on a ResultComplete, never on a bare OK.
   */
  static boolean reattachable(byte[] request) {
    try {
      CodedInputStream in = CodedInputStream.newInstance(request);
      boolean reattachable = false;
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        if (tag == tag(REQUEST_OPTIONS, WireFormat.WIRETYPE_LENGTH_DELIMITED)) {
          CodedInputStream option = CodedInputStream.newInstance(in.readByteBuffer());
          for (int t = option.readTag(); t != 0; t = option.readTag()) {
            if (t == tag(REATTACH_OPTIONS, WireFormat.WIRETYPE_LENGTH_DELIMITED)) {
              reattachable = flag(CodedInputStream.newInstance(option.readByteBuffer()));
            } else {
              option.skipField(t);
            }
          }
        } else {
          in.skipField(tag);
        }
      }
      return reattachable;
    } catch (IOException e) {
      return true;
    }
  }

  private static int tag(int field, int wireType) {
    return (field << 3) | wireType;
  }

  private static boolean flag(CodedInputStream options) throws IOException {
    boolean value = false;
    for (int t = options.readTag(); t != 0; t = options.readTag()) {
      if (t == tag(REATTACHABLE, WireFormat.WIRETYPE_VARINT)) {
        value = options.readBool(); // the last occurrence wins, as in protobuf's parse
      } else {
        options.skipField(t);
      }
    }
    return value;
  }

  /** True if an ExecutePlanResponse is the ResultComplete that ends a successful reattachable execution. */
  static boolean resultComplete(Payload response) {
    try {
      return response.read(
          in -> {
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
              if (WireFormat.getTagFieldNumber(tag) == RESULT_COMPLETE) return true;
              in.skipField(tag);
            }
            return false;
          });
    } catch (IOException e) {
      return false;
    }
  }
}
