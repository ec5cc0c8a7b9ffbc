package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/clients/ tells users to connect each client exactly the way the compatibility suite connects it, so
 * what CompatIT proves is what the page says.
 */
final class ClientDocsTest {

  @Test
  void jvmPage_saysWhatTheSuiteDoes() throws Exception {
    String page = Files.readString(Path.of("docs", "clients", "jvm.md"));
    for (String flag :
        List.of(
            JvmClient.ADD_OPENS,
            JvmClient.TRUST_STORE,
            JvmClient.TRUST_STORE_PASSWORD,
            JvmClient.TRUST_STORE_TYPE,
            JvmClient.URL_PARAMETERS)) {
      assertTrue(page.contains(flag), "docs/clients/jvm.md does not say " + flag);
    }
    for (ClientUnderTest client : Clients.all()) {
      if (client instanceof JvmClient) {
        assertTrue(
            page.contains(client.version()),
            "docs/clients/jvm.md does not name the checked version " + client.version());
      }
    }
  }

  @Test
  void indexPage_linksEveryClientPage() throws Exception {
    String index = Files.readString(Path.of("docs", "clients", "README.md"));
    assertTrue(index.contains("(jvm.md)"), index);
  }
}
