package io.sparkgate.cli;

import io.sparkgate.lakehouse.IcebergTimeTravelPolicyRewriter;
import io.sparkgate.policy.Effect;
import io.sparkgate.policy.Policy;
import io.sparkgate.policy.PolicyCompiler;
import io.sparkgate.policy.PolicyException;
import io.sparkgate.policy.PolicyTests;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code sparkgate policy check|test|explain}: lint policy files, run their tests, explain a decision. */
@Command(
    name = "policy",
    mixinStandardHelpOptions = true,
    description = "Work with Sparkgate policy files.",
    subcommands = {PolicyCommand.Check.class, PolicyCommand.Test.class, ExplainCommand.class})
public final class PolicyCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new picocli.CommandLine.ParameterException(
        spec.commandLine(), "a subcommand is required: check, test or explain");
  }

  static PolicyCompiler compiler() {
    return new PolicyCompiler(Effect.DENY, IcebergTimeTravelPolicyRewriter.all().keySet());
  }

  /** Policy files of a directory (test files excluded), or the one file given. */
  static List<Path> policyFiles(Path target) throws IOException {
    if (Files.isRegularFile(target)) return List.of(target);
    try (Stream<Path> s = Files.list(target)) {
      return s.filter(p -> p.toString().endsWith(".yaml") && !p.toString().endsWith("_test.yaml"))
          .sorted()
          .toList();
    }
  }

  @Command(
      name = "check",
      mixinStandardHelpOptions = true,
      description = "Compile policy files and report every mistake (file:line, rule, problem).")
  static final class Check implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Parameters(
        index = "0",
        arity = "0..1",
        defaultValue = "policies",
        description = "A policy file or a directory of them (default ${DEFAULT-VALUE}).")
    Path target;

    @Override
    public Integer call() throws IOException {
      PrintWriter out = spec.commandLine().getOut();
      PrintWriter err = spec.commandLine().getErr();
      int bad = 0;
      List<Path> files = policyFiles(target);
      for (Path f : files) {
        try {
          Policy p = compiler().compile(f);
          out.printf(
              "OK   %s: %d rules, default %s%n",
              f, p.ruleNames().size(), p.defaultEffect().name().toLowerCase(java.util.Locale.ROOT));
        } catch (PolicyException e) {
          bad++;
          err.println("FAIL " + e.getMessage());
        }
      }
      out.flush();
      err.flush();
      if (files.isEmpty()) {
        err.println("no policy files in " + target);
        return 1;
      }
      return bad == 0 ? 0 : 1;
    }
  }

  @Command(
      name = "test",
      mixinStandardHelpOptions = true,
      description =
          "Run the <name>_test.yaml files beside the policies (with --pool, the one beside its policy); non-zero exit on any failure.")
  static final class Test implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Parameters(
        index = "0",
        arity = "0..1",
        defaultValue = "policies",
        description = "A directory or one _test.yaml file (default ${DEFAULT-VALUE}).")
    Path target;

    @Mixin PoolOptions pool;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      try {
        Optional<PoolOptions.Pool> p = pool.named();
        if (p.isPresent()) {
          Path policy = p.get().policy();
          String name = policy.getFileName().toString().replaceFirst("\\.ya?ml$", "");
          target = policy.resolveSibling(name + "_test.yaml");
        }
      } catch (Refused e) {
        spec.commandLine().getErr().println(e.getMessage());
        return 2;
      }
      try {
        PolicyTests tests = new PolicyTests(compiler());
        PolicyTests.Summary s =
            Files.isDirectory(target)
                ? tests.runDirectory(target, out)
                : tests.runFile(target, out);
        out.flush();
        return s.ok() && s.passed() > 0 ? 0 : 1;
      } catch (PolicyException e) {
        spec.commandLine().getErr().println("FAIL " + e.getMessage());
        return 1;
      }
    }
  }
}
