package io.sparkgate.compat;

import java.util.ArrayList;
import java.util.List;

/** Every client the suite drives: the one place a client is added (PySpark, Go, ...). */
final class Clients {
  private Clients() {}

  static List<ClientUnderTest> all() {
    List<ClientUnderTest> clients = new ArrayList<>();
    // The real JVM client at each version Maven serves (spark-client-jvm/pom.xml resolves each
    // one).
    clients.add(new JvmClient("4.0.0"));
    clients.add(new JvmClient("4.1.1"));
    clients.add(new JvmClient("4.2.0"));
    clients.addAll(PySparkClients.all());
    clients.addAll(GoClients.all());
    return List.copyOf(clients);
  }
}
