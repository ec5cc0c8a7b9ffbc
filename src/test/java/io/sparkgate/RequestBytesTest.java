package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Each request is read once: the head stage reads its head (and stamps the principal), the inspector its body,
 * and every other stage reads {@code call.head()} and {@code call.facts()}. Read from the sources, like {@link
 * PackageDependenciesTest}: which files decode protobuf wire bytes, and which of them may.
 */
final class RequestBytesTest {
  private static final Path SOURCES = Path.of("src/main/java/io/sparkgate");

  /** Decoding protobuf wire bytes: a wire reader, or a message type's parser. */
  private static final Pattern DECODES =
      Pattern.compile("CodedInputStream|\\.parseFrom\\(|getParserForType\\(\\)");

  /** Packages whose purpose is reading requests: the inspector (body and head) and the head stage. */
  private static final List<String> READERS = List.of("inspect/", "head/");

  /** Other files that decode bytes, each for a reason other than reading a call's request. */
  private static final Map<String, String> OTHERS =
      Map.of(
          "call/Answers.java", "Spark's ExecutePlan responses",
          "audit/WireScanner.java", "responses, for the audit record",
          "redact/ConfigRedaction.java", "Config responses",
          "forward/Payload.java", "the transport's buffers, for the readers above",
          "lakehouse/TimeTravelRequestRewriter.java",
              "the decide stage's rewrite of a plan the inspector read and the policy chose to rewrite");

  @Test
  void onlyTheHeadStageAndTheInspectorReadRequestBytes() throws IOException {
    Map<String, String> unexpected = new TreeMap<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        String rel =
            SOURCES.relativize(f).toString().replace(f.getFileSystem().getSeparator(), "/");
        if (READERS.stream().anyMatch(rel::startsWith) || OTHERS.containsKey(rel)) continue;
        var m = DECODES.matcher(Files.readString(f));
        if (m.find()) unexpected.put(rel, m.group());
      }
    }
    assertEquals(
        Map.of(),
        unexpected,
        "files decoding wire bytes: read the request's head from call.head(), its body from call.facts()");
  }

  @Test
  void theOtherDecoders_readNoRequestType() throws IOException {
    Pattern requestParse = Pattern.compile("\\w+Request\\.parseFrom\\(");
    Map<String, String> reading = new TreeMap<>();
    for (String rel : OTHERS.keySet()) {
      if (rel.startsWith("lakehouse/")) continue; // its rewrite parses the plan it replaces
      var m = requestParse.matcher(Files.readString(SOURCES.resolve(rel)));
      if (m.find()) reading.put(rel, m.group());
    }
    assertEquals(Map.of(), reading);
  }
}
