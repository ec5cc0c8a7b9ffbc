package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every package states its contract: a package-info.java whose javadoc opens with one sentence on what the
 * package owns and what it must not do, read from the sources like {@link PackageDependenciesTest}.
 */
final class PackageContractsTest {
  private static final Path SOURCES = Path.of("src/main/java/io/sparkgate");

  /** A javadoc comment, then any annotations, then the package declaration. */
  private static final Pattern JAVADOC =
      Pattern.compile(
          "/\\*\\*(.*?)\\*/\\s*(?:@[\\w.]+(?:\\([^)]*\\))?\\s*)*package\\s", Pattern.DOTALL);

  private static boolean holdsJava(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.anyMatch(f -> f.toString().endsWith(".java"));
    }
  }

  private static boolean hasJavadoc(Path packageInfo) throws IOException {
    if (!Files.isRegularFile(packageInfo)) return false;
    Matcher m = JAVADOC.matcher(Files.readString(packageInfo));
    return m.find() && !m.group(1).replaceAll("[*\\s]", "").isEmpty();
  }

  @Test
  void everyPackageHasAPackageInfo_withAJavadocContract() throws IOException {
    List<String> missing = new ArrayList<>();
    try (Stream<Path> dirs = Files.walk(SOURCES)) {
      for (Path dir : dirs.filter(Files::isDirectory).toList()) {
        if (holdsJava(dir) && !hasJavadoc(dir.resolve("package-info.java"))) {
          String rel =
              SOURCES.relativize(dir).toString().replace(dir.getFileSystem().getSeparator(), ".");
          missing.add(rel.isEmpty() ? "io.sparkgate" : "io.sparkgate." + rel);
        }
      }
    }
    assertEquals(
        List.of(), missing, "packages without a package-info.java javadoc stating their contract");
  }
}
