package io.sparkgate.audit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks an audit log's hash chain and sequence across its files, and reports the first record that does
 * not follow the one before it.
 */
public final class AuditVerifier {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * The outcome: {@code ok} (the chain is intact), how many records were checked, what is wrong (or where the
   * chain starts), and the gaps the log itself records: records the proxy could not write (a full or failing
   * disk, a full queue), stated by a gap record where the loss happened.
   */
  public record Result(boolean ok, long records, String message, List<Gap> gaps) {
    Result(boolean ok, long records, String message) {
      this(ok, records, message, List.of());
    }
  }

  /**
   * Records lost before {@code seq}, the gap record that states them: how many, between when, and why.
   */
  public record Gap(long seq, long recordsLost, String since, String until, String reason) {
    @Override
    public String toString() {
      return "before record "
          + seq
          + ": "
          + recordsLost
          + " record(s) lost between "
          + since
          + " and "
          + until
          + " ("
          + reason
          + ")";
    }
  }

  private AuditVerifier() {}

  /** Verifies these files (rotated and current, in any order: they are ordered by their first record). */
  public static Result verify(List<Path> files) throws IOException {
    List<FileStart> ordered = new ArrayList<>();
    Set<Path> given = new HashSet<>(files);
    for (Path file : files) {
      if (given.contains(AuditFiles.gzipped(file))) {
        continue; // a rotated file caught between its compression and its removal: the .gz has it
        // all
      }
      ordered.add(new FileStart(file, firstSeq(file)));
    }
    ordered.sort(Comparator.comparingLong(FileStart::firstSeq));

    long expectedSeq = -1;
    String expectedPrev = null;
    long checked = 0;
    String note = "";
    List<Gap> gaps = new ArrayList<>();
    for (FileStart start : ordered) {
      try (BufferedReader reader = AuditFiles.open(start.file())) {
        long lineNo = 0;
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
          lineNo++;
          String where = start.file() + ":" + lineNo;
          if (line.isEmpty()) {
            return new Result(false, checked, where + ": empty line (the file was edited)");
          }
          JsonNode record;
          try {
            record = JSON.readTree(line);
          } catch (IOException e) {
            return new Result(
                false, checked, where + ": not a JSON record (the line was edited or truncated)");
          }
          long seq = record.path("seq").asLong(-1);
          String prev = record.path("prev").asText(null);
          if (seq < 1 || prev == null) {
            return new Result(
                false, checked, where + ": no seq/prev fields: not a Sparkgate audit record");
          }
          if (expectedSeq < 0) {
            if (seq == 1 && !HashChain.GENESIS.equals(prev)) {
              return new Result(
                  false, checked, where + ": record 1 does not start a chain (prev was changed)");
            }
            if (seq > 1) {
              note = " (chain checked from record " + seq + "; earlier files were not given)";
            }
          } else if (seq > expectedSeq) {
            return new Result(
                false,
                checked,
                where
                    + ": record "
                    + seq
                    + " follows record "
                    + (expectedSeq - 1)
                    + ": "
                    + (seq - expectedSeq)
                    + " record(s) missing (deleted lines or a missing file)");
          } else if (seq < expectedSeq) {
            return new Result(
                false,
                checked,
                where
                    + ": record "
                    + seq
                    + " appears after record "
                    + (expectedSeq - 1)
                    + ": records were reordered or duplicated");
          } else if (!prev.equals(expectedPrev)) {
            return new Result(
                false,
                checked,
                where
                    + ": record "
                    + seq
                    + " does not match the hash of record "
                    + (seq - 1)
                    + ": record "
                    + (seq - 1)
                    + " (the line before) was edited");
          }
          expectedSeq = seq + 1;
          expectedPrev = HashChain.hash(line);
          checked++;
          if (AuditWriter.GAP_EVENT.equals(record.path("event").asText())) {
            gaps.add(
                new Gap(
                    seq,
                    record.path("records_lost").asLong(),
                    record.path("lost_since").asText(),
                    record.path("lost_until").asText(),
                    record.path("reason").asText()));
          }
        }
      }
    }
    if (checked == 0) {
      return new Result(false, 0, "no audit records found");
    }
    if (!gaps.isEmpty()) {
      long lost = gaps.stream().mapToLong(Gap::recordsLost).sum();
      note +=
          "; "
              + lost
              + " record(s) the proxy could not write, in "
              + gaps.size()
              + " gap(s):\n  "
              + String.join("\n  ", gaps.stream().map(Gap::toString).toList());
    }
    return new Result(true, checked, checked + " records, chain intact" + note, List.copyOf(gaps));
  }

  private record FileStart(Path file, long firstSeq) {}

  private static long firstSeq(Path file) throws IOException {
    try (BufferedReader reader = AuditFiles.open(file)) {
      String line = reader.readLine();
      if (line == null) {
        return Long.MAX_VALUE;
      }
      try {
        return JSON.readTree(line).path("seq").asLong(Long.MAX_VALUE);
      } catch (IOException e) {
        return Long.MAX_VALUE;
      }
    }
  }
}
