package io.sparkgate.auth;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.WireFormat;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.proto.spark.UserContext;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

/**
 * Puts the principal into a request's {@code user_context} (field 2 of every Spark Connect request) at the
 * wire level: top-level fields are scanned, every field other than 2 is copied byte for byte, and one
 * rewritten UserContext replaces whatever the client declared (or is added when it declared none). Parsing
 * and re-serializing the whole request instead could reorder or re-encode fields the proxy has no business
 * touching, and would cost a full parse of plans that can be megabytes.
 *
 * <p>The server keys sessions and operations by {@code (user_id, session_id)}: a client choosing its
 * user_id could attach to another user's session. {@code extensions} are removed because they are arbitrary
 * messages the server's plugins may trust as identity.
 */
final class UserContextRewriter {
  static final int USER_CONTEXT_FIELD = 2;

  private final AuthConfig.UserIdMismatch onMismatch;

  UserContextRewriter(AuthConfig.UserIdMismatch onMismatch) {
    this.onMismatch = onMismatch;
  }

  byte[] rewrite(byte[] message, Principal principal) throws StatusException {
    CodedInputStream in = CodedInputStream.newInstance(message);
    ByteArrayOutputStream rest = new ByteArrayOutputStream(message.length);
    UserContext.Builder declared = UserContext.newBuilder();
    int insertAt = -1;
    try {
      while (true) {
        int start = in.getTotalBytesRead();
        int tag = in.readTag();
        if (tag == 0) {
          break;
        }
        if (WireFormat.getTagFieldNumber(tag) == USER_CONTEXT_FIELD) {
          if (WireFormat.getTagWireType(tag) != WireFormat.WIRETYPE_LENGTH_DELIMITED) {
            throw malformed();
          }
          UserContext one = UserContext.parseFrom(in.readBytes());
          checkUserId(one.getUserId(), principal);
          // Protobuf merges repeated occurrences of a message field; so does the server, so must we.
          declared.mergeFrom(one);
          if (insertAt < 0) {
            insertAt = rest.size();
          }
          continue;
        }
        if (!in.skipField(tag)) {
          throw malformed(); // an end-group tag at the top level
        }
        rest.write(message, start, in.getTotalBytesRead() - start);
      }
    } catch (InvalidProtocolBufferException e) {
      throw malformed();
    } catch (IOException e) {
      throw new IllegalStateException("reading from a byte array", e);
    }
    UserContext rewritten =
        declared.setUserId(principal.name()).setUserName(principal.name()).clearExtensions().build();
    byte[] others = rest.toByteArray();
    if (insertAt < 0) {
      insertAt = others.length;
    }
    ByteString field = ByteString.EMPTY;
    try {
      ByteString.Output encoded = ByteString.newOutput();
      CodedOutputStream out = CodedOutputStream.newInstance(encoded);
      out.writeBytes(USER_CONTEXT_FIELD, rewritten.toByteString());
      out.flush();
      field = encoded.toByteString();
    } catch (IOException e) {
      throw new IllegalStateException("writing to memory", e);
    }
    byte[] result = new byte[others.length + field.size()];
    System.arraycopy(others, 0, result, 0, insertAt);
    field.copyTo(result, insertAt);
    System.arraycopy(others, insertAt, result, insertAt + field.size(), others.length - insertAt);
    return result;
  }

  private void checkUserId(String declared, Principal principal) throws StatusException {
    if (onMismatch == AuthConfig.UserIdMismatch.REJECT && !declared.isEmpty() && !declared.equals(principal.name())) {
      throw Status.PERMISSION_DENIED
          .withDescription("user_id '" + JwtVerifier.printable(declared) + "' is not the authenticated user '"
              + principal.name() + "': drop user_id from the sc:// URL or set it to your user name")
          .asException();
    }
  }

  private static StatusException malformed() {
    return Status.INVALID_ARGUMENT.withDescription("malformed request message").asException();
  }
}
