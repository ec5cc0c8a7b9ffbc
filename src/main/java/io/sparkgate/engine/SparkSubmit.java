package io.sparkgate.engine;

import io.sparkgate.config.EnginesConfig;
import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Starts an engine as Spark's own {@code sbin/start-connect-server.sh} does, in the foreground: {@code
 * spark-submit --class SparkConnectServer spark-internal}, with the pool's master and conf, and the port,
 * binding address and token Sparkgate chose. The token travels in the environment
 * ({@code SPARK_CONNECT_AUTHENTICATE_TOKEN}, which Spark reads when the conf key is unset), never on the
 * command line, where any local user could read it.
 */
final class SparkSubmit implements Launcher {
  static final String MAIN_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer";
  static final String TOKEN_ENV = "SPARK_CONNECT_AUTHENTICATE_TOKEN";

  private final EnginesConfig config;

  SparkSubmit(EnginesConfig config) {
    this.config = config;
  }

  @Override
  public Process launch(Spec spec) throws IOException {
    ProcessBuilder builder = new ProcessBuilder(command(config, spec));
    Map<String, String> env = builder.environment();
    // What a shell that set up its own PySpark or Spark would otherwise hand the engine.
    env.keySet().removeIf(k -> k.startsWith("PYSPARK_") || k.startsWith("SPARK_CONNECT"));
    env.remove("SPARK_REMOTE");
    env.remove("SPARK_LOCAL_REMOTE");
    env.put("SPARK_HOME", config.sparkHome().toString());
    // The driver's other listeners (its RPC and block manager) bind where the Connect port does,
    // not on
    // whatever interface Spark would guess.
    if (!spec.bindAddress().equals("0.0.0.0") && !spec.bindAddress().equals("::")) {
      env.put("SPARK_LOCAL_IP", spec.bindAddress());
    }
    env.put(TOKEN_ENV, spec.token());
    // Relative paths an engine writes (spark-warehouse, metastore_db) land beside its log, not in
    // Sparkgate's working directory; set spark.sql.warehouse.dir in conf for a real one.
    builder.directory(spec.log().toAbsolutePath().getParent().toFile());
    builder.redirectErrorStream(true);
    builder.redirectOutput(Redirect.appendTo(spec.log().toFile()));
    builder.redirectInput(Redirect.from(new java.io.File("/dev/null")));
    return builder.start();
  }

  /** The command line (no secret in it). */
  static List<String> command(EnginesConfig config, Spec spec) {
    List<String> cmd = new ArrayList<>();
    cmd.add(config.sparkSubmit().toString());
    cmd.addAll(List.of("--class", MAIN_CLASS, "--name", spec.appName()));
    cmd.addAll(List.of("--master", config.master(), "--deploy-mode", config.deployMode()));
    if (spec.proxyUser() != null) cmd.addAll(List.of("--proxy-user", spec.proxyUser()));
    // Spark's UI would listen on every interface and show every query: off unless the operator
    // wants it.
    if (!config.conf().containsKey("spark.ui.enabled")) conf(cmd, "spark.ui.enabled", "false");
    config.conf().forEach((k, v) -> conf(cmd, k, v));
    conf(cmd, "spark.connect.grpc.binding.address", spec.bindAddress());
    conf(cmd, "spark.connect.grpc.binding.port", Integer.toString(spec.port()));
    // One port, Sparkgate's choice: an engine must not wander to the next free one, where the proxy
    // would
    // not look for it.
    conf(cmd, "spark.connect.grpc.port.maxRetries", "0");
    cmd.add("spark-internal");
    return cmd;
  }

  private static void conf(List<String> cmd, String key, String value) {
    cmd.add("--conf");
    cmd.add(key + "=" + value);
  }
}
