package io.sparkgate.quota;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.WireFormat;
import io.sparkgate.forward.Payload;
import java.io.IOException;

/**
 * The few fields of Spark Connect messages that say when an operation is over, read from their encoding at
 * the top level only (field numbers from Spark's base.proto). The inspect stage's request head gives the
 * session and operation; these are what it does not read. A malformed message reads as "no": the backend
 * refuses it anyway, and the lease frees what a misread keeps.
 */
final class Messages {
  // ExecutePlanRequest.request_options, RequestOption.reattach_options,
  // ReattachOptions.reattachable
  private static final int REQUEST_OPTIONS = 5;
  private static final int REATTACH_OPTIONS = 1;
  private static final int REATTACHABLE = 1;
  // ReleaseExecuteRequest.release_all
  private static final int RELEASE_ALL = 5;
  // InterruptRequest.interrupt_type and its values
  private static final int INTERRUPT_TYPE = 4;
  static final int INTERRUPT_ALL = 1;
  static final int INTERRUPT_OPERATION_ID = 3;
  // ExecutePlanResponse.result_complete, one member of the response_type oneof
  private static final int RESULT_COMPLETE = 14;

  /** A small response that says all results were sent is read in place from its first buffer. */
  private static final int HEAD_BYTES = 256;

  private static final Payload.Reader<Boolean> RESULT_COMPLETE_READER = Messages::resultComplete;

  private Messages() {}

  /** Whether an ExecutePlanRequest asks for a reattachable execution (the operation outlives its stream). */
  static boolean reattachable(byte[] request) {
    try {
      CodedInputStream in = CodedInputStream.newInstance(request);
      boolean reattachable = false;
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        if (lengthDelimited(tag, REQUEST_OPTIONS)) {
          int limit = in.pushLimit(in.readRawVarint32());
          for (int t = in.readTag(); t != 0; t = in.readTag()) {
            if (lengthDelimited(t, REATTACH_OPTIONS)) {
              int inner = in.pushLimit(in.readRawVarint32());
              for (int r = in.readTag(); r != 0; r = in.readTag()) {
                if (varint(r, REATTACHABLE)) {
                  reattachable = in.readBool(); // the last value wins, as protobuf parses it
                } else {
                  in.skipField(r);
                }
              }
              in.popLimit(inner);
            } else {
              in.skipField(t);
            }
          }
          in.popLimit(limit);
        } else {
          in.skipField(tag);
        }
      }
      return reattachable;
    } catch (IOException e) {
      return false;
    }
  }

  /** Whether a ReleaseExecuteRequest releases the whole operation (rather than the responses up to one). */
  static boolean releasesAll(byte[] request) {
    try {
      CodedInputStream in = CodedInputStream.newInstance(request);
      boolean all = false;
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        if (lengthDelimited(tag, RELEASE_ALL)) {
          all = true;
          in.skipField(tag);
        } else if (WireFormat.getTagFieldNumber(tag) == RELEASE_ALL + 1) {
          all = false; // release_until: the oneof's last member set wins
          in.skipField(tag);
        } else {
          in.skipField(tag);
        }
      }
      return all;
    } catch (IOException e) {
      return false;
    }
  }

  /** An InterruptRequest's interrupt_type (0 when unreadable). */
  static int interruptType(byte[] request) {
    try {
      CodedInputStream in = CodedInputStream.newInstance(request);
      int type = 0;
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        if (varint(tag, INTERRUPT_TYPE)) {
          type = in.readEnum();
        } else {
          in.skipField(tag);
        }
      }
      return type;
    } catch (IOException e) {
      return 0;
    }
  }

  /** Whether an ExecutePlanResponse (or a reattached one) says that every result was sent. */
  static boolean resultComplete(Payload response) {
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

  /** Members of ExecutePlanResponse's response_type oneof other than result_complete. */
  private static boolean responseType(int field) {
    return field == 2
        || field == 5
        || (field >= 8 && field <= 11)
        || (field >= 16 && field <= 23)
        || field == 999;
  }

  private static boolean lengthDelimited(int tag, int field) {
    return tag == tag(field, WireFormat.WIRETYPE_LENGTH_DELIMITED);
  }

  private static boolean varint(int tag, int field) {
    return tag == tag(field, WireFormat.WIRETYPE_VARINT);
  }

  private static int tag(int field, int wireType) {
    return field << 3 | wireType;
  }
}
