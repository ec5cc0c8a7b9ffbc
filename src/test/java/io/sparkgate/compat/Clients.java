package io.sparkgate.compat;

import java.util.List;

/** Every client the suite drives: the one place a client is added (PySpark, Go, ...). */
final class Clients {
  private Clients() {}

  static List<ClientUnderTest> all() {
    return List.of(
        // The real JVM client at each version Maven serves (spark-client-jvm/pom.xml resolves each
        // one).
        new JvmClient("4.0.0"), new JvmClient("4.1.1"), new JvmClient("4.2.0"));
  }
}
