package io.sparkgate.inspect;

import io.sparkgate.proto.spark.AddArtifactsRequest;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.zip.CRC32;

/**
 * The state of one AddArtifacts client stream. Chunks carry no name, so the tracker remembers the artifact
 * begun last; it also remembers the identity of the first message, because the server takes the session
 * and user from that message only. Not thread-safe: one per call, fed in message order.
 */
public final class ArtifactTracker {
  private String sessionId;
  private String userId;
  private String name;
  private long expectedBytes;
  private long expectedChunks;
  private long seenBytes;
  private long seenChunks;
  private boolean crcOk = true;
  private MessageDigest sha;

  ArtifactTracker() {}

  void observe(AddArtifactsRequest req, FactSink sink) {
    if (sessionId == null) {
      sessionId = req.getSessionId();
      userId = req.getUserContext().getUserId();
    } else if (!sessionId.equals(req.getSessionId())
        || !userId.equals(req.getUserContext().getUserId())) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "identity_changed")
          .put("where", "add_artifacts")
          .put("first_session_id", sessionId)
          .put("session_id", req.getSessionId())
          .emit();
    }
    switch (req.getPayloadCase()) {
      case BATCH -> {
        for (var a : req.getBatch().getArtifactsList()) {
          boolean ok = crc(a.getData().getData().toByteArray()) == a.getData().getCrc();
          artifact(sink, "batch", a.getName())
              .put("size", a.getData().getData().size())
              .put("crc", a.getData().getCrc())
              .put("crc_ok", ok)
              .put("sha256", hex(sha256().digest(a.getData().getData().toByteArray())))
              .emit();
        }
      }
      case BEGIN_CHUNK -> {
        var begin = req.getBeginChunk();
        incompleteCheck(sink);
        name = begin.getName();
        expectedBytes = begin.getTotalBytes();
        expectedChunks = begin.getNumChunks();
        seenBytes = 0;
        seenChunks = 0;
        crcOk = true;
        sha = sha256();
        artifact(sink, "begin", name)
            .put("size", expectedBytes)
            .put("num_chunks", expectedChunks)
            .emit();
        chunk(begin.getInitialChunk(), sink);
      }
      case CHUNK -> {
        if (name == null) {
          sink.unclassified(
              "orphan_artifact_chunk", "add_artifacts", "a chunk with no artifact begun");
          return;
        }
        chunk(req.getChunk(), sink);
      }
      default ->
          sink.fact(Fact.Kind.UNCLASSIFIED, "unknown_case")
              .put("where", "add_artifacts")
              .put("oneof", "AddArtifactsRequest.payload")
              .put("case", req.getPayloadCase().toString())
              .emit();
    }
  }

  /** Called at the end of the stream: an artifact begun and never finished is a fact. */
  Facts finish(int maxFacts) {
    FactSink sink = new FactSink(maxFacts);
    incompleteCheck(sink);
    return sink.build();
  }

  private void chunk(AddArtifactsRequest.ArtifactChunk chunk, FactSink sink) {
    byte[] data = chunk.getData().toByteArray();
    seenBytes += data.length;
    seenChunks++;
    crcOk &= crc(data) == chunk.getCrc();
    sha.update(data);
    if (seenChunks >= expectedChunks) {
      artifact(sink, "complete", name)
          .put("size", seenBytes)
          .put("declared_size", expectedBytes)
          .put("crc_ok", crcOk)
          .put("size_ok", seenBytes == expectedBytes)
          .put("sha256", hex(sha.digest()))
          .emit();
      name = null;
    }
  }

  private void incompleteCheck(FactSink sink) {
    if (name != null) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "incomplete_artifact")
          .put("name", name)
          .put("chunks", seenChunks)
          .put("num_chunks", expectedChunks)
          .emit();
      name = null;
    }
  }

  private static FactSink.Builder artifact(FactSink sink, String stage, String name) {
    int slash = name.indexOf('/');
    FactSink.Builder b =
        sink.fact(Fact.Kind.ARTIFACT, stage)
            .put("name", name)
            .put("prefix", slash < 0 ? "" : name.substring(0, slash + 1))
            .put("where", "add_artifacts");
    String rest = slash < 0 ? name : name.substring(slash + 1);
    // An artifact name is relative to the server's artifact directory; only an escape from it is a
    // path.
    String kind = LocalPaths.classify(rest);
    if (kind != null && !kind.equals("relative") && !kind.equals("uri")) {
      LocalPaths.report(
          sink, rest, "artifact_name", "add_artifacts", SessionView.LOCAL_FILE_SYSTEM);
    }
    return b;
  }

  private static long crc(byte[] data) {
    CRC32 c = new CRC32();
    c.update(data);
    return c.getValue();
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }

  private static String hex(byte[] b) {
    return HexFormat.of().formatHex(b);
  }
}
