package io.sparkgate.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgate.testing.Await;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The container file, followed step by step without a container runtime (this machine reaches no image
 * registry, so the base image cannot be pulled): every COPY source exists after {@code mvn package} and is
 * staged where the file puts it, the image's ENTRYPOINT and CMD (the same JVM flags, the same paths, remapped
 * into the staged root) validate a configuration and serve it, EXPOSE names the ports the defaults listen on,
 * and STOPSIGNAL SIGTERM stops the proxy gracefully.
 */
class ContainerfileIT {
  private static final Path CONTAINERFILE = Path.of("deploy/container/Containerfile");
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The instructions of the file, continuation lines joined, comments dropped. */
  private static List<String[]> instructions() throws IOException {
    List<String[]> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : Files.readAllLines(CONTAINERFILE)) {
      if (line.isBlank() || line.stripLeading().startsWith("#")) continue;
      if (line.endsWith("\\")) {
        current.append(line, 0, line.length() - 1).append(' ');
        continue;
      }
      current.append(line);
      String text = current.toString().strip();
      int space = text.indexOf(' ');
      out.add(new String[] {text.substring(0, space), text.substring(space + 1).strip()});
      current.setLength(0);
    }
    return out;
  }

  @Test
  void followedStepByStep_theImageServesAndStopsOnItsStopSignal() throws Exception {
    Map<String, String> last = new LinkedHashMap<>();
    List<String[]> copies = new ArrayList<>();
    for (String[] i : instructions()) {
      if (i[0].equals("COPY")) copies.add(i[1].split("\\s+"));
      last.put(i[0], i[1]);
    }
    assertTrue(last.get("FROM").contains("17"), "a Java 17 runtime: " + last.get("FROM"));
    assertEquals("SIGTERM", last.get("STOPSIGNAL"));
    assertEquals("10001", last.get("USER"), "not root");
    assertEquals(List.of("15003", "9464"), List.of(last.get("EXPOSE").split("\\s+")));

    Path root = Files.createDirectories(Path.of("target", "container-root")).toAbsolutePath();
    for (String[] copy : copies) {
      Path source = Path.of(copy[0]);
      assertTrue(
          Files.exists(source), "COPY source " + source + " (build the jar first, as documented)");
      Path target = root.resolve(copy[1].substring(1));
      if (Files.isDirectory(source)) {
        try (Stream<Path> files = Files.walk(source)) {
          for (Path f : files.filter(Files::isRegularFile).toList()) {
            Path to = target.resolve(source.relativize(f).toString());
            Files.createDirectories(to.getParent());
            Files.copy(f, to, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
          }
        }
      } else {
        Files.createDirectories(target.getParent());
        Files.copy(source, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }

    // The configuration operators mount at the CMD's path: the shipped policy from the image,
    // defaults for the ports (those EXPOSE names), a fake backend address (serving needs none to be
    // up).
    int port = freePort();
    int admin = freePort();
    Files.writeString(
        root.resolve("etc/sparkgate/sparkgate.yaml"),
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: " + port + ", plaintext: true, drain_delay: 1s}",
            "backend: {address: '127.0.0.1:1'}",
            "policy: {file: " + root.resolve("etc/sparkgate/policies/shared-server.yaml") + "}",
            "admin: {port: " + admin + "}",
            "auth: {anonymous: true}",
            ""));
    List<String> command = new ArrayList<>();
    for (String part : jsonArray(last.get("ENTRYPOINT"))) command.add(remap(part, root));
    for (String part : jsonArray(last.get("CMD"))) command.add(remap(part, root));
    assertEquals("java", command.get(0));
    command.set(0, Path.of(System.getProperty("java.home"), "bin", "java").toString());

    List<String> check = new ArrayList<>(command);
    check.add("--check");
    Process checked = new ProcessBuilder(check).redirectErrorStream(true).start();
    String out = new String(checked.getInputStream().readAllBytes());
    assertTrue(checked.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, checked.exitValue(), out);
    assertTrue(out.contains("OK"), out);

    Process serving =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(root.resolve("serve.log").toFile())
            .start();
    try {
      HttpClient http = HttpClient.newHttpClient();
      Await.until(
          "the image's command to serve /healthz",
          Duration.ofSeconds(60),
          () -> {
            try {
              return http.send(
                          HttpRequest.newBuilder(
                                  URI.create("http://127.0.0.1:" + admin + "/healthz"))
                              .build(),
                          HttpResponse.BodyHandlers.ofString())
                      .statusCode()
                  == 200;
            } catch (IOException notYet) {
              return serving.isAlive() ? false : fail(root);
            }
          });
      serving.destroy(); // SIGTERM, the STOPSIGNAL
      assertTrue(serving.waitFor(30, TimeUnit.SECONDS), "stopped on SIGTERM");
    } finally {
      serving.destroyForcibly();
    }
    String log = Files.readString(root.resolve("serve.log"));
    assertTrue(log.contains("draining") && log.contains("Sparkgate stopped"), log);
    assertTrue(!log.contains("Unrecognized VM option"), log);
  }

  private static boolean fail(Path root) throws IOException {
    throw new AssertionError(
        "the image's command exited: " + Files.readString(root.resolve("serve.log")));
  }

  private static List<String> jsonArray(String text) throws IOException {
    return List.of(JSON.readValue(text, String[].class));
  }

  /** An absolute path of the image, inside the staged root. */
  private static String remap(String part, Path root) {
    for (String prefix : List.of("/opt/sparkgate/", "/etc/sparkgate/")) {
      if (part.startsWith(prefix)) return root.resolve(part.substring(1)).toString();
    }
    return part;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
