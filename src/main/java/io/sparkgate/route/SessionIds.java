package io.sparkgate.route;

import com.google.protobuf.CodedInputStream;
import java.io.IOException;

/**
 * The session a request names, read straight off its bytes: {@code session_id} (field 1 of every Spark
 * Connect request) and {@code user_context.user_id} (field 2, field 1), as protobuf reads them (the last
 * occurrence wins). Only these are read, and only at the top level, so routing costs a few hundred
 * nanoseconds before the request is inspected in full.
 */
record SessionIds(String userId, String sessionId) {
  static final SessionIds NONE = new SessionIds("", "");

  /** What {@code request} names; {@link #NONE}'s fields where it names nothing or cannot be read. */
  static SessionIds read(byte[] request) {
    String session = "";
    String user = "";
    try {
      CodedInputStream in = CodedInputStream.newInstance(request);
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        switch (tag) {
          case (1 << 3) | 2 -> session = in.readStringRequireUtf8();
          case (2 << 3) | 2 -> {
            String declared = userId(in.readByteArray());
            if (declared != null) user = declared;
          }
          default -> {
            if (!in.skipField(tag)) return new SessionIds(user, session);
          }
        }
      }
    } catch (IOException e) {
      // A request that does not parse is refused by the inspect stage; routing has nothing to add.
      return NONE;
    }
    return new SessionIds(user, session);
  }

  /** The user_id of one user_context; null if it names none (a later one may, or an earlier one did). */
  private static String userId(byte[] userContext) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(userContext);
    String user = null;
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      if (tag == ((1 << 3) | 2)) {
        user = in.readStringRequireUtf8();
      } else if (!in.skipField(tag)) {
        break;
      }
    }
    return user;
  }
}
