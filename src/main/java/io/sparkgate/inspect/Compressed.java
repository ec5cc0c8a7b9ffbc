package io.sparkgate.inspect;

import com.github.luben.zstd.ZstdInputStream;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.sparkgate.proto.spark.Command;
import io.sparkgate.proto.spark.CompressionCodec;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Relation;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Spark 4.1+ compressed plans (Plan.compressed_operation, zstd): inflated with a size bound, so a small
 * request cannot become gigabytes in the proxy, and then walked like any other plan.
 */
final class Compressed {
  private Compressed() {}

  static void inspect(
      Message m, Frame frame, InspectorConfig config, FactSink sink, PlanWalker walker) {
    Plan.CompressedOperation op = (Plan.CompressedOperation) m;
    String where = frame.path();
    if (op.getCompressionCodec() != CompressionCodec.COMPRESSION_CODEC_ZSTD) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_compression")
          .put("codec", op.getCompressionCodecValue())
          .put("where", where)
          .emit();
      return;
    }
    byte[] raw;
    try {
      raw = inflate(op.getData().toByteArray(), config.maxDecompressedBytes());
    } catch (IOException e) {
      sink.unclassified("bad_compressed_plan", where, String.valueOf(e.getMessage()));
      return;
    }
    if (raw == null) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "compressed_plan_too_large")
          .put("where", where)
          .put("limit", config.maxDecompressedBytes())
          .emit();
      return;
    }
    int remainingDepth = Math.max(1, config.maxDepth() - frame.depth());
    Message inner;
    try {
      CodedInputStream in = CodedInputStream.newInstance(raw);
      in.setRecursionLimit(remainingDepth);
      inner =
          switch (op.getOpType()) {
            case OP_TYPE_RELATION -> Relation.parseFrom(in);
            case OP_TYPE_COMMAND -> Command.parseFrom(in);
            default -> null;
          };
    } catch (InvalidProtocolBufferException e) {
      Requests.parseFailure(e, where, config, sink);
      return;
    } catch (IOException e) {
      sink.unclassified("bad_compressed_plan", where, String.valueOf(e.getMessage()));
      return;
    }
    if (inner == null) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_case")
          .put("where", where)
          .put("oneof", "CompressedOperation.op_type")
          .put("case", op.getOpTypeValue())
          .emit();
      return;
    }
    boolean relation = op.getOpType() == Plan.CompressedOperation.OpType.OP_TYPE_RELATION;
    sink.fact(Fact.Kind.COMPRESSED_PLAN, "zstd")
        .put("op_type", relation ? "relation" : "command")
        .put("compressed_bytes", op.getData().size())
        .put("inflated_bytes", raw.length)
        .put("where", where)
        .emit();
    String name = relation ? "(root)" : "(command)";
    walker.push(new Frame(inner, frame, name, frame.depth() + 1));
  }

  /** The inflated bytes, or null if they exceed {@code max}. */
  static byte[] inflate(byte[] data, long max) throws IOException {
    try (InputStream in = new ZstdInputStream(new ByteArrayInputStream(data))) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buf = new byte[64 * 1024];
      long total = 0;
      for (int n; (n = in.read(buf)) > 0; ) {
        total += n;
        if (total > max) return null;
        out.write(buf, 0, n);
      }
      return out.toByteArray();
    }
  }
}
