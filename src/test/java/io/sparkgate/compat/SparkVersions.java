package io.sparkgate.compat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Which client/server Spark versions Spark Connect itself supports together. */
final class SparkVersions {
  private static final Pattern MAJOR_MINOR = Pattern.compile("^v?(\\d+)\\.(\\d+)");

  private SparkVersions() {}

  /**
   * A client no newer than the server within one major version (by major.minor), or a 3.5 client on a 4.x
   * server: older clients on newer servers is what Spark keeps working (and tests, 3.5 clients on 4.x). A
   * client newer than its server is not supported: it sends plans and settings the older server does not
   * know (the 4.1 and 4.2 JVM clients' createDataFrame fails on a 4.0 server without any proxy). Versions
   * that are not Spark's are assumed supported, so nothing is silently skipped.
   */
  static boolean supported(String client, String server) {
    Matcher c = MAJOR_MINOR.matcher(client);
    Matcher s = MAJOR_MINOR.matcher(server);
    if (!c.find() || !s.find()) {
      return true;
    }
    int clientMajor = Integer.parseInt(c.group(1));
    int serverMajor = Integer.parseInt(s.group(1));
    if (clientMajor < 3) {
      return true; // not a Spark version (the Go client's module version, v0.x)
    }
    int clientMinor = Integer.parseInt(c.group(2));
    int serverMinor = Integer.parseInt(s.group(2));
    return (clientMajor == serverMajor && clientMinor <= serverMinor)
        || (clientMajor == 3 && Integer.parseInt(c.group(2)) >= 5 && serverMajor == 4);
  }
}
