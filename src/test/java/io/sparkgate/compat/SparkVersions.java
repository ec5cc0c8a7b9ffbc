package io.sparkgate.compat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Which client/server Spark versions Spark Connect itself supports together. */
final class SparkVersions {
  private static final Pattern MAJOR_MINOR = Pattern.compile("^v?(\\d+)\\.(\\d+)");

  private SparkVersions() {}

  /**
   * Same major version, or a 3.5 client on a 4.x server (Spark keeps 3.5 clients working on 4.x). A newer
   * major client on an older server is not supported: it sends plans in fields the old server does not read.
   * Versions that are not Spark's are assumed supported, so nothing is silently skipped.
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
    return clientMajor == serverMajor
        || (clientMajor == 3 && Integer.parseInt(c.group(2)) >= 5 && serverMajor == 4);
  }
}
