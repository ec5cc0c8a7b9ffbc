package io.sparkgate.route;

import io.sparkgate.call.Principal;
import io.sparkgate.config.MatchConfig;
import io.sparkgate.config.RouteConfig;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/** The configured routes, compiled: the first whose match takes a principal names its pool. */
final class Routes {
  private record Compiled(Matcher match, String pool) {}

  private final List<Compiled> routes;

  Routes(List<RouteConfig> routes) {
    this.routes = routes.stream().map(r -> new Compiled(new Matcher(r.match()), r.pool())).toList();
  }

  /** The pool for this principal, dialling {@code authority}; empty when no route takes it. */
  Optional<String> pool(Principal principal, String authority) {
    for (Compiled r : routes) {
      if (r.match.matches(principal, authority)) return Optional.of(r.pool);
    }
    return Optional.empty();
  }

  /** One route's match: every list it sets must have a pattern that matches. */
  static final class Matcher {
    private final List<Pattern> principals;
    private final List<Pattern> groups;
    private final List<Pattern> tenants;
    private final List<Pattern> authority;

    Matcher(MatchConfig match) {
      this.principals = compile(match.principals());
      this.groups = compile(match.groups());
      this.tenants = compile(match.tenants());
      // Host names are case-insensitive: SPARK.example.com is spark.example.com.
      this.authority =
          match.authority().stream()
              .map(
                  g ->
                      Pattern.compile(glob(g).pattern(), Pattern.DOTALL | Pattern.CASE_INSENSITIVE))
              .toList();
    }

    boolean matches(Principal p, String authorityHeader) {
      return (principals.isEmpty() || any(principals, p.name()))
          && (groups.isEmpty() || p.groups().stream().anyMatch(g -> any(groups, g)))
          && (tenants.isEmpty() || p.tenant().map(t -> any(tenants, t)).orElse(false))
          && (authority.isEmpty() || any(authority, host(authorityHeader)));
    }

    private static boolean any(List<Pattern> patterns, String value) {
      for (Pattern p : patterns) {
        if (p.matcher(value).matches()) return true;
      }
      return false;
    }

    /** The host the client dialled, without the port: {@code sparkgate.example:443} is matched as the host. */
    private static String host(String authority) {
      if (authority == null) return "";
      if (authority.startsWith("[")) {
        int end = authority.indexOf(']');
        return end < 0 ? authority : authority.substring(0, end + 1);
      }
      int colon = authority.lastIndexOf(':');
      return colon < 0 || authority.indexOf(':') != colon
          ? authority
          : authority.substring(0, colon);
    }

    /** Globs: {@code *} any run of characters, {@code ?} one; everything else literal, case as written. */
    private static List<Pattern> compile(List<String> globs) {
      return globs.stream().map(Matcher::glob).toList();
    }

    private static Pattern glob(String glob) {
      StringBuilder regex = new StringBuilder();
      StringBuilder literal = new StringBuilder();
      for (char c : glob.toCharArray()) {
        if (c == '*' || c == '?') {
          if (literal.length() > 0) regex.append(Pattern.quote(literal.toString()));
          literal.setLength(0);
          regex.append(c == '*' ? ".*" : ".");
        } else {
          literal.append(c);
        }
      }
      if (literal.length() > 0) regex.append(Pattern.quote(literal.toString()));
      return Pattern.compile(regex.toString(), Pattern.DOTALL);
    }
  }
}
