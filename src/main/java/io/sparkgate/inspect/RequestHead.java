package io.sparkgate.inspect;

import io.sparkgate.proto.spark.CompressionCodec;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.InterruptRequest;
import io.sparkgate.proto.spark.ReleaseExecuteRequest;
import java.io.IOException;
import java.util.Locale;

/**
 * What a request names, read once from its first message right after authentication, for every stage after:
 * the session and operation it addresses, the client that sent it, the user Spark will run it as (the
 * principal's name where authentication stamps it), and what the stages that follow an operation or a secret
 * need: whether an execution is reattachable, what a release or an interrupt ends, which Config operation it is,
 * and the plan's size and compression. Empty strings where the request has no such field. Read as protobuf
 * parses the request, so that no stage sees a different request from the one Spark runs.
 *
 * @param reattachable an ExecutePlan that asks for a reattachable execution (any of its options does, as Spark
 *     reads them)
 * @param release which part of an operation a ReleaseExecute releases
 * @param interrupt what an Interrupt interrupts; UNRECOGNIZED for a type this build does not know
 * @param config the Config operation; OPTYPE_NOT_SET for any other method
 * @param planBytes the encoded size of an ExecutePlan's plan
 * @param planCompression the codec of a compressed plan ({@code zstd}), empty when it is not compressed
 * @param readable false when the message does not parse (the inspector refuses it; nothing else is known)
 */
public record RequestHead(
    String sessionId,
    String userId,
    String operationId,
    String clientType,
    String observedServerSessionId,
    String newSessionId,
    boolean reattachable,
    ReleaseExecuteRequest.ReleaseCase release,
    InterruptRequest.InterruptType interrupt,
    ConfigRequest.Operation.OpTypeCase config,
    long planBytes,
    String planCompression,
    boolean readable) {
  /** Before the head was read, and for a message that cannot be. */
  public static final RequestHead NONE =
      new RequestHead(
          "",
          "",
          "",
          "",
          "",
          "",
          false,
          ReleaseExecuteRequest.ReleaseCase.RELEASE_NOT_SET,
          InterruptRequest.InterruptType.INTERRUPT_TYPE_UNSPECIFIED,
          ConfigRequest.Operation.OpTypeCase.OPTYPE_NOT_SET,
          0,
          "",
          false);

  /** The head of one request message of {@code method} (bare name), with the user_id it declares. */
  public static RequestHead read(String method, byte[] request) {
    HeadLayout layout = HeadLayout.forMethod(Requests.shortName(method));
    if (layout == null) return NONE;
    HeadLayout.Read r;
    try {
      r = layout.read(request);
    } catch (IOException e) {
      return NONE;
    }
    InterruptRequest.InterruptType interrupt =
        InterruptRequest.InterruptType.forNumber(r.interruptType);
    return new RequestHead(
        orEmpty(layout.value(r, HeadLayout.SESSION)),
        orEmpty(HeadLayout.userId(r)),
        orEmpty(layout.value(r, HeadLayout.OPERATION)),
        orEmpty(layout.value(r, HeadLayout.CLIENT)),
        orEmpty(layout.value(r, HeadLayout.OBSERVED)),
        orEmpty(layout.value(r, HeadLayout.NEW_SESSION)),
        r.reattachable,
        release(layout, r),
        interrupt == null ? InterruptRequest.InterruptType.UNRECOGNIZED : interrupt,
        ConfigRequest.Operation.OpTypeCase.forNumber(r.configMember),
        r.planBytes,
        compression(r),
        true);
  }

  /** This head with the user Spark will key the session by: the principal's name, once it is stamped. */
  public RequestHead withUserId(String user) {
    return new RequestHead(
        sessionId,
        user,
        operationId,
        clientType,
        observedServerSessionId,
        newSessionId,
        reattachable,
        release,
        interrupt,
        config,
        planBytes,
        planCompression,
        readable);
  }

  /** Whether a Config request reads values (whose secrets must not reach the client). */
  public boolean readsConfig() {
    return switch (config) {
      case GET, GET_ALL, GET_OPTION, GET_WITH_DEFAULT -> true;
      default -> false;
    };
  }

  private static ReleaseExecuteRequest.ReleaseCase release(HeadLayout layout, HeadLayout.Read r) {
    ReleaseExecuteRequest.ReleaseCase c =
        ReleaseExecuteRequest.ReleaseCase.forNumber(layout.releaseMember(r));
    return c == null ? ReleaseExecuteRequest.ReleaseCase.RELEASE_NOT_SET : c;
  }

  private static String compression(HeadLayout.Read r) {
    if (r.planMember != io.sparkgate.proto.spark.Plan.COMPRESSED_OPERATION_FIELD_NUMBER) return "";
    CompressionCodec codec = CompressionCodec.forNumber(r.codec);
    return codec == null
        ? "codec " + r.codec
        : codec.name().replace("COMPRESSION_CODEC_", "").toLowerCase(Locale.ROOT);
  }

  private static String orEmpty(String s) {
    return s == null ? "" : s;
  }
}
