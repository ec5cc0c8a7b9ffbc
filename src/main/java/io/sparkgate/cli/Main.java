package io.sparkgate.cli;

import io.sparkgate.forward.NettyDefaults;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code sparkgate} command line: one subcommand per task, each with {@code --help}. */
@Command(
    name = "sparkgate",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "A TLS-terminating, authenticating, policy-enforcing proxy for Spark Connect.",
    subcommands = {
      ServeCommand.class,
      DevCertsCommand.class,
      AuditCommand.class,
      PolicyCommand.class,
      GrantsCommand.class,
      AdminCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    NettyDefaults.apply();
    JulBridge.install();
    System.exit(commandLine().execute(args));
  }

  static CommandLine commandLine() {
    return new CommandLine(new Main());
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "a command is required (try 'sparkgate serve --help')");
  }
}
