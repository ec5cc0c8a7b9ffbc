package io.sparkgate.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

final class GoClientTest {

  @Test
  void parse_oneOutcomePerLine_inTheOrderAsked() throws IOException {
    List<Outcome> outcomes =
        GoClient.parse(
            List.of(
                "{\"scenario\":\"version\",\"outcome\":\"pass\",\"detail\":\"version() = 4.0.0 abc\"}",
                "",
                "{\"scenario\":\"reflect\",\"outcome\":\"refused\",\"detail\":\"[PermissionDenied] x\"}"),
            List.of(Scenario.VERSION, Scenario.REFLECT, Scenario.CONF_SET));
    assertEquals(
        List.of(
            new Outcome(Scenario.VERSION, "pass", "version() = 4.0.0 abc"),
            new Outcome(Scenario.REFLECT, "refused", "[PermissionDenied] x")),
        outcomes);
  }

  @Test
  void parse_aScenarioNotAskedFor_isAnError() {
    IOException e =
        assertThrows(
            IOException.class,
            () ->
                GoClient.parse(
                    List.of("{\"scenario\":\"range\",\"outcome\":\"pass\",\"detail\":\"\"}"),
                    List.of(Scenario.VERSION)));
    assertTrue(e.getMessage().contains("unexpected scenario"), e.getMessage());
  }

  @Test
  void moduleVersion_isWhatGoModRequires_andWhatTheDocsName() throws IOException {
    String version = GoClient.moduleVersion(GoClient.SOURCES.resolve("go.mod"));
    assertTrue(version.startsWith("v0."), version);
    assertEquals("Go client " + version, new GoClient().name());
    String docs = Files.readString(Path.of("docs", "clients", "go.md"));
    assertTrue(docs.contains("`" + version + "`"), "docs/clients/go.md names another version");
    // What GoClient does to reach the proxy is what the page tells users to do.
    assertTrue(docs.contains("SSL_CERT_FILE=") && docs.contains("/;token="), docs);
  }
}
