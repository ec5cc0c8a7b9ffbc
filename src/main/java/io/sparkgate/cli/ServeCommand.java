package io.sparkgate.cli;

import io.sparkgate.Sparkgate;
import io.sparkgate.config.ConfigException;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.policy.PolicyException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = "Run the proxy until stopped (SIGTERM or Ctrl-C stop it gracefully).")
final class ServeCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = {"-c", "--config"},
      defaultValue = "proxy/sparkgate.yaml",
      description = "Configuration file (default: ${DEFAULT-VALUE}).")
  Path config;

  @Option(names = "--check", description = "Validate the configuration and exit.")
  boolean checkOnly;

  @Override
  public Integer call() throws Exception {
    ProxyConfig loaded;
    try {
      loaded = ProxyConfig.load(config);
    } catch (ConfigException e) {
      return refuse(e.getMessage());
    }
    if (checkOnly) {
      System.out.println(config + ": OK");
      return 0;
    }
    Sparkgate proxy;
    try {
      proxy = Sparkgate.start(loaded);
    } catch (IllegalArgumentException | ConfigException e) {
      // Files the configuration names (certificates, keys, JWKS), read at start; already phrased as
      // "tls.key_file <path>: what is wrong".
      return refuse(config + ": " + e.getMessage());
    } catch (PolicyException e) {
      // The policy file, compiled at start: the message names it, the line and the rule.
      return refuse(e.getMessage());
    } catch (java.io.IOException e) {
      System.err.println("sparkgate: cannot start: " + e.getMessage());
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  proxy.drainAndClose();
                  stopped.countDown();
                },
                "sparkgate-shutdown"));
    proxy.awaitTermination();
    stopped.await();
    return 0;
  }

  /** A configuration or policy that cannot be used: one line saying why, never a stack trace. */
  private int refuse(String why) {
    PrintWriter err = spec.commandLine().getErr();
    err.println("sparkgate: " + why);
    err.flush();
    return 2;
  }
}
