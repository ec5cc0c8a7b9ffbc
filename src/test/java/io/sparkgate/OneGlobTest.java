package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * There is one glob matcher, {@code config/Glob.java}: a second one is how the same pattern comes to mean two
 * things in two files. Read from the sources like {@link PackageDependenciesTest}: any other file showing a
 * telltale of turning a glob into a regex or of matching {@code *} by hand fails, naming the file and the
 * telltale. SQL text that merely contains a star ({@code /* comments *}{@code /}, {@code SELECT *}) is not
 * one.
 */
final class OneGlobTest {
  private static final Path SOURCES = Path.of("src/main/java/io/sparkgate");
  private static final Path THE_GLOB = SOURCES.resolve("config/Glob.java");

  /** Each telltale, by what it shows. */
  private static final Map<String, Pattern> TELLTALES =
      Map.of(
          "a star replaced or split on (glob to regex)",
          Pattern.compile("\\.(?:replace|replaceAll|replaceFirst|split)\\(\\s*\"(?:\\\\\\\\)?\\*"),
          "an escaped star in a string (a regex that means a literal *)",
          Pattern.compile("\"\\\\\\\\\\*\""),
          "the regex \".*\" appended or chosen on its own (what a * becomes)",
          Pattern.compile("(?:append\\(|->|[?:,])\\s*\"\\.\\*\""),
          "a '*' character compared or searched for (a hand-rolled wildcard), not beside '/'",
          Pattern.compile(
              "^(?!.*'/').*(?:[=!]=\\s*'\\*'|'\\*'\\s*[=!]=|case\\s+'\\*'|'\\*'\\s*->|indexOf\\('\\*'\\))",
              Pattern.MULTILINE),
          "a type named like a glob or a wildcard",
          Pattern.compile("\\b(?:class|record|interface|enum)\\s+\\w*(?:Glob(?!al)|Wildcard)\\w*"),
          "a method named like a glob or a wildcard that answers a match or a regex",
          Pattern.compile(
              "\\b(?:boolean|Pattern|Predicate<String>)\\s+\\w*(?:[Gg]lob(?!al)|[Ww]ildcard)\\w*\\s*\\("),
          "the JDK's glob (FileSystem.getPathMatcher)",
          Pattern.compile("\"glob:|getPathMatcher\\("));

  /** {@code Pattern.quote} of a glob's text between {@code .*}: the two together are a glob turned regex. */
  private static final Pattern QUOTE = Pattern.compile("Pattern\\.quote\\(");

  private static final Pattern ANY_RUN = Pattern.compile("\"\\.\\*\"");

  static List<String> telltales(String source) {
    List<String> found = new ArrayList<>();
    TELLTALES.forEach(
        (what, pattern) -> {
          if (pattern.matcher(source).find()) found.add(what);
        });
    if (QUOTE.matcher(source).find() && ANY_RUN.matcher(source).find())
      found.add("Pattern.quote together with \".*\"");
    return found;
  }

  @Test
  void theOnlyGlobMatcher_isConfigGlob() throws IOException {
    List<String> others = new ArrayList<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
        if (f.equals(THE_GLOB)) continue;
        for (String what : telltales(Files.readString(f)))
          others.add(SOURCES.relativize(f) + ": " + what);
      }
    }
    assertEquals(List.of(), others, "a second glob implementation: use io.sparkgate.config.Glob");
  }

  /** Each telltale is found in the shape the duplicates this test replaced had, and not in SQL scanning. */
  @Test
  void telltales_findTheOldDuplicates_andNotSqlScanning() {
    String[] seconds = {
      // quota's hand-rolled matcher
      "if (pi < p.length() && c == '*') { star = pi++; }",
      // the secret patterns' regex
      "String[] parts = glob.split(\"\\\\*\", -1); regex.append(\".*\"); regex.append(Pattern.quote(p));",
      // the routes' and the policy's regexes
      "switch (c) { case '*' -> re.append(\".*\"); case '?' -> re.append('.'); }",
      "Pattern.compile(glob.replace(\"*\", \".*\"))",
      "final class Wildcards {}",
      "regex.append(c == '*' ? \".*\" : \".\");",
      "private static boolean globMatches(String p, String v) {",
      "FileSystems.getDefault().getPathMatcher(\"glob:\" + p)",
    };
    for (String s : seconds) assertTrue(!telltales(s).isEmpty(), s);
    String[] notGlobs = {
      "if (sql.charAt(i) == '/' && sql.charAt(i + 1) == '*') {",
      "} else if (sql.charAt(i) == '*' && sql.charAt(i + 1) == '/' && depth > 0) {",
      ".put(\"key\", key.isEmpty() ? \"*\" : key)",
      "static StringMatcher glob(String glob, boolean ignoreCase) {",
      "static boolean isGlobal(String name) {",
      "record GlobalTempView(String name) {}",
      "int dot = name.indexOf(\".\");",
      "Pattern.compile(\"^spark\\\\.sql\\\\..*$\")",
    };
    for (String s : notGlobs) assertEquals(List.of(), telltales(s), s);
  }
}
