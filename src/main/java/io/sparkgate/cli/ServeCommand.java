package io.sparkgate.cli;

import io.sparkgate.Sparkgate;
import io.sparkgate.config.ConfigException;
import io.sparkgate.config.ProxyConfig;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = "Run the proxy until stopped (SIGTERM or Ctrl-C stop it gracefully).")
final class ServeCommand implements Callable<Integer> {
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
      System.err.println("sparkgate: " + e.getMessage());
      return 2;
    }
    if (checkOnly) {
      System.out.println(config + ": OK");
      return 0;
    }
    Sparkgate proxy;
    try {
      proxy = Sparkgate.start(loaded);
    } catch (IllegalArgumentException e) {
      // Certificate and key problems, already phrased as "tls.key_file <path>: what is wrong".
      System.err.println("sparkgate: " + config + ": " + e.getMessage());
      return 2;
    } catch (java.io.IOException e) {
      System.err.println("sparkgate: cannot start: " + e.getMessage());
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  proxy.close();
                  stopped.countDown();
                },
                "sparkgate-shutdown"));
    proxy.awaitTermination();
    stopped.await();
    return 0;
  }
}
