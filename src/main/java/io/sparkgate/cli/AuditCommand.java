package io.sparkgate.cli;

import io.sparkgate.audit.AuditVerifier;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(
    name = "audit",
    mixinStandardHelpOptions = true,
    description = "Work with Sparkgate audit logs.",
    subcommands = {AuditCommand.Verify.class})
final class AuditCommand {

  @Command(
      name = "verify",
      mixinStandardHelpOptions = true,
      description = {
        "Check the hash chain of an audit log and report the first edited, deleted or reordered record.",
        "Give the current file and its rotated .jsonl.gz (or not yet compressed .jsonl) files, in any order.",
        "Records the proxy could not write (a full disk, a full queue) are listed as gaps, each with its place,",
        "count, time range and cause.",
        "Exit status: 0 intact, 1 broken (edited, deleted or reordered), 2 bad arguments, 3 intact with gaps."
      })
  static final class Verify implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "FILE", description = "Audit log files.")
    List<Path> files;

    @Override
    public Integer call() throws Exception {
      for (Path file : files) {
        if (!java.nio.file.Files.isRegularFile(file)) {
          System.err.println("sparkgate audit verify: " + file + ": no such file");
          return 2;
        }
      }
      AuditVerifier.Result result = AuditVerifier.verify(files);
      if (result.ok() && !result.gaps().isEmpty()) {
        System.out.println("GAPS: " + result.message());
        return 3;
      }
      if (result.ok()) {
        System.out.println("OK: " + result.message());
        return 0;
      }
      System.out.println("BROKEN: " + result.message());
      return 1;
    }
  }
}
