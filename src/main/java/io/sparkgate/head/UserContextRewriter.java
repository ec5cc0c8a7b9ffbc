package io.sparkgate.head;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.WireFormat;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Principal;
import io.sparkgate.config.AuthConfig;
import io.sparkgate.proto.spark.UserContext;
import java.io.IOException;
import java.util.Arrays;

/**
 * Puts the principal into a request's {@code user_context} (field 2 of every Spark Connect request) at the
 * wire level: top-level fields are scanned, every field other than 2 is copied byte for byte, and one
 * rewritten UserContext replaces whatever the client declared (or is added when it declared none). Parsing
 * and re-serializing the whole request instead could reorder or re-encode fields the proxy has no business
 * touching, and would cost a full parse of plans that can be megabytes.
 *
 * <p>The server keys sessions and operations by {@code (user_id, session_id)}: a client choosing its
 * user_id could attach to another user's session. {@code extensions} are arbitrary messages the server's
 * plugins may trust as identity: only those whose type URL is allowed ({@code auth.user_context_extensions},
 * by default a pipelines client's PipelineAnalysisContext) are copied, byte for byte, into the new context;
 * the others are removed, or refuse the request. Any field of UserContext this build does not know is removed:
 * the identity the server gets is only what the proxy vouches for. The declared context is read for its
 * user_id and extensions only, never built as a message.
 */
final class UserContextRewriter {
  static final int USER_CONTEXT_FIELD = 2;
  private static final int USER_ID_FIELD = UserContext.USER_ID_FIELD_NUMBER;
  private static final int USER_NAME_FIELD = UserContext.USER_NAME_FIELD_NUMBER;
  private static final int EXTENSIONS_TAG =
      UserContext.EXTENSIONS_FIELD_NUMBER << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED;

  /** google.protobuf.Any.type_url (1), a string. */
  private static final int TYPE_URL_TAG = 1 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED;

  /** (field << 3) | wire type, as WireFormat builds tags. */
  private static final int USER_ID_TAG = USER_ID_FIELD << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED;

  private final AuthConfig.UserIdMismatch onMismatch;
  private final AuthConfig.UserContextExtensions extensions;

  UserContextRewriter(
      AuthConfig.UserIdMismatch onMismatch, AuthConfig.UserContextExtensions extensions) {
    this.onMismatch = onMismatch;
    this.extensions = extensions;
  }

  byte[] rewrite(byte[] message, Principal principal) throws StatusException {
    CodedInputStream in = CodedInputStream.newInstance(message);
    // The declared user_context fields, as [start, end) pairs of the message, in order: dropped
    // from the copy.
    int[] drop = new int[2];
    int drops = 0;
    // The allowed extensions' encodings (tag, length and Any), copied into the new context in
    // order.
    java.io.ByteArrayOutputStream kept = new java.io.ByteArrayOutputStream();
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
          int limit = in.pushLimit(in.readRawVarint32());
          checkUserId(declared(in, message, kept), principal);
          in.popLimit(limit);
          if (drops == drop.length) {
            drop = Arrays.copyOf(drop, drops * 2);
          }
          drop[drops++] = start;
          drop[drops++] = in.getTotalBytesRead();
          continue;
        }
        if (!in.skipField(tag)) {
          throw malformed(); // an end-group tag at the top level
        }
      }
    } catch (InvalidProtocolBufferException e) {
      throw malformed();
    } catch (IOException e) {
      throw new IllegalStateException("reading from a byte array", e);
    }
    String name = principal.name();
    // What the server gets, whatever was declared: user_id and user_name, the principal's. The
    // declared extensions and any field this build does not know are not the proxy's to vouch for,
    // and are dropped.
    byte[] keptExtensions = kept.toByteArray();
    int contextSize =
        stringSize(USER_ID_FIELD, name) + stringSize(USER_NAME_FIELD, name) + keptExtensions.length;
    int fieldSize =
        CodedOutputStream.computeTagSize(USER_CONTEXT_FIELD)
            + CodedOutputStream.computeUInt32SizeNoTag(contextSize)
            + contextSize;
    int dropped = 0;
    for (int i = 0; i < drops; i += 2) {
      dropped += drop[i + 1] - drop[i];
    }
    // One copy of the request: what precedes the first declared user_context (all of it when there
    // is none), the rewritten field there, then everything else in order. Encoded straight into the
    // result: a CodedOutputStream over a stream would allocate a 4 KiB buffer on every call.
    byte[] result = new byte[message.length - dropped + fieldSize];
    int insertAt = drops == 0 ? message.length : drop[0];
    System.arraycopy(message, 0, result, 0, insertAt);
    int at = insertAt + fieldSize;
    try {
      CodedOutputStream out = CodedOutputStream.newInstance(result, insertAt, fieldSize);
      out.writeTag(USER_CONTEXT_FIELD, WireFormat.WIRETYPE_LENGTH_DELIMITED);
      out.writeUInt32NoTag(contextSize);
      writeString(out, USER_ID_FIELD, name);
      writeString(out, USER_NAME_FIELD, name);
      out.writeRawBytes(keptExtensions);
      out.checkNoSpaceLeft();
    } catch (IOException e) {
      throw new IllegalStateException("writing to an array of the computed size", e);
    }
    for (int i = 0; i < drops; i += 2) {
      int from = drop[i + 1];
      int to = i + 2 < drops ? drop[i + 2] : message.length;
      System.arraycopy(message, from, result, at, to - from);
      at += to - from;
    }
    return result;
  }

  /**
   * The user_id of one declared user_context, read as protobuf parses it (the last occurrence wins, UTF-8
   * checked); its allowed extensions are appended to {@code kept} as encoded in {@code message}; the rest of
   * it is checked to be well formed and skipped.
   */
  private String declared(CodedInputStream in, byte[] message, java.io.ByteArrayOutputStream kept)
      throws IOException, StatusException {
    String userId = "";
    for (int start = in.getTotalBytesRead(), tag = in.readTag();
        tag != 0;
        start = in.getTotalBytesRead(), tag = in.readTag()) {
      if (tag == USER_ID_TAG) {
        userId = in.readStringRequireUtf8();
      } else if (tag == EXTENSIONS_TAG) {
        int limit = in.pushLimit(in.readRawVarint32());
        String typeUrl = typeUrl(in);
        in.popLimit(limit);
        if (extensions.allow().contains(typeUrl)) {
          kept.write(message, start, in.getTotalBytesRead() - start);
        } else if (extensions.refuseOthers()) {
          throw refusedExtension(typeUrl);
        }
      } else if (!in.skipField(tag)) {
        throw new InvalidProtocolBufferException("an end-group tag in user_context");
      }
    }
    return userId;
  }

  /** An Any's type_url as protobuf parses it (the last occurrence wins); the rest checked and skipped. */
  private static String typeUrl(CodedInputStream in) throws IOException {
    String url = "";
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      if (tag == TYPE_URL_TAG) {
        url = in.readStringRequireUtf8();
      } else if (!in.skipField(tag)) {
        throw new InvalidProtocolBufferException("an end-group tag in an extension");
      }
    }
    return url;
  }

  private static StatusException refusedExtension(String typeUrl) {
    return new io.sparkgate.call.SparkError(
            Status.Code.PERMISSION_DENIED,
            "SPARKGATE_USER_CONTEXT_EXTENSION",
            "The request's user context carries an extension ("
                + io.sparkgate.call.SparkError.printable(typeUrl)
                + ") that Sparkgate does not forward. Remove it from the client, or ask the platform team"
                + " to allow its type URL (auth.user_context_extensions).",
            "42501",
            java.util.Map.of("type_url", io.sparkgate.call.SparkError.printable(typeUrl)),
            java.util.Optional.empty())
        .toException();
  }

  /** As a proto3 string field is encoded: not at all when empty. */
  private static int stringSize(int field, String value) {
    return value.isEmpty() ? 0 : CodedOutputStream.computeStringSize(field, value);
  }

  private static void writeString(CodedOutputStream out, int field, String value)
      throws IOException {
    if (!value.isEmpty()) {
      out.writeString(field, value);
    }
  }

  private void checkUserId(String declared, Principal principal) throws StatusException {
    if (onMismatch == AuthConfig.UserIdMismatch.REJECT
        && !declared.isEmpty()
        && !declared.equals(principal.name())) {
      throw Status.PERMISSION_DENIED
          .withDescription(
              "user_id '"
                  + io.sparkgate.call.SparkError.printable(declared)
                  + "' is not the authenticated user '"
                  + principal.name()
                  + "': drop user_id from the sc:// URL or set it to your user name")
          .asException();
    }
  }

  private static StatusException malformed() {
    return Status.INVALID_ARGUMENT.withDescription("malformed request message").asException();
  }
}
