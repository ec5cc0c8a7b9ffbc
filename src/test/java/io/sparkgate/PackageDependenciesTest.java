package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * How the packages may depend on each other, read from the sources' imports: the stages (auth, inspect, live,
 * policy, lakehouse, audit, route, quota) meet only in the neutral call package and are assembled by
 * Sparkgate, no package depends on itself through others, and only the gRPC transport touches the Netty that
 * grpc-netty-shaded bundles.
 */
final class PackageDependenciesTest {
  private static final Path SOURCES = Path.of("src/main/java/io/sparkgate");
  private static final Pattern IMPORT =
      Pattern.compile("^import (?:static )?io\\.sparkgate\\.([a-z]+)\\.", Pattern.MULTILINE);

  /** The packages that may build on grpc-netty-shaded's relocated Netty: the gRPC transport and its TLS. */
  private static final Set<String> SHADED_NETTY_USERS = Set.of("forward", "tls");

  private static final String SHADED_NETTY = "io.grpc.netty.shaded";

  private static final Set<String> STAGES =
      Set.of(
          "auth",
          "head",
          "redact",
          "inspect",
          "policy",
          "lakehouse",
          "audit",
          "route",
          "quota",
          "live",
          "tracing");

  private static Map<String, Set<String>> imports() throws IOException {
    Map<String, Set<String>> out = new TreeMap<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        Path dir = SOURCES.relativize(f).getParent();
        if (dir == null) continue; // Sparkgate itself: the composition root
        String pkg = dir.getName(0).toString();
        Set<String> deps = out.computeIfAbsent(pkg, k -> new TreeSet<>());
        Matcher m = IMPORT.matcher(Files.readString(f));
        while (m.find()) {
          if (!m.group(1).equals(pkg) && !m.group(1).equals("proto")) deps.add(m.group(1));
        }
      }
    }
    return out;
  }

  @Test
  void stagesDoNotImportEachOther_exceptInspectsFacts() throws IOException {
    List<String> wrong = new ArrayList<>();
    imports()
        .forEach(
            (pkg, deps) -> {
              if (!STAGES.contains(pkg)) return;
              for (String dep : deps) {
                // Facts and sessions are what inspection produces: the call context carries them to
                // every stage.
                if (STAGES.contains(dep) && !dep.equals("inspect")) wrong.add(pkg + " -> " + dep);
              }
            });
    assertEquals(List.of(), wrong);
  }

  @Test
  void noPackageDependsOnItselfThroughOthers() throws IOException {
    Map<String, Set<String>> graph = imports();
    for (String start : graph.keySet()) {
      Set<String> seen = new TreeSet<>();
      List<String> todo = new ArrayList<>(graph.get(start));
      while (!todo.isEmpty()) {
        String next = todo.remove(todo.size() - 1);
        if (seen.add(next)) todo.addAll(graph.getOrDefault(next, Set.of()));
      }
      assertTrue(!seen.contains(start), start + " depends on itself through " + seen);
    }
  }

  /**
   * grpc-netty-shaded's Netty is gRPC's private copy: outside the transport a package uses a neutral interface
   * of {@code forward} (or Netty's own artifact, as the admin listener does). Any mention counts, an import, a
   * qualified name or a string (a system property, a class name): each binds to the private copy alike. The
   * composition root in {@code io.sparkgate} is held to it too.
   */
  @Test
  void grpcsShadedNetty_onlyInForwardAndTls() throws IOException {
    List<String> offenders = new ArrayList<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
        Path dir = SOURCES.relativize(f).getParent();
        if (dir != null && SHADED_NETTY_USERS.contains(dir.getName(0).toString())) continue;
        List<String> lines = Files.readAllLines(f);
        for (int i = 0; i < lines.size(); i++) {
          if (lines.get(i).contains(SHADED_NETTY)) {
            offenders.add(SOURCES.relativize(f) + ":" + (i + 1) + ": " + lines.get(i).strip());
          }
        }
      }
    }
    assertTrue(
        offenders.isEmpty(),
        SHADED_NETTY + " outside " + SHADED_NETTY_USERS + ":\n" + String.join("\n", offenders));
  }
}
