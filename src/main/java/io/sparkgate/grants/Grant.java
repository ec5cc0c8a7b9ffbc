package io.sparkgate.grants;

import io.sparkgate.call.MatchBlock;
import io.sparkgate.config.Glob;
import java.util.List;
import java.util.Set;

/**
 * One grant of a policy's {@code data_access}: privileges on tables (and views and functions, by the same
 * names) and paths, to whom its {@code to:} block takes.
 *
 * @param index its place in the policy, first 0: where several grants allow an access, the first is cited
 * @param paths path globs, matched as written ({@code *} takes any run, slashes too)
 */
record Grant(
    int index,
    String name,
    MatchBlock to,
    String toText,
    List<TablePattern> tables,
    List<String> pathTexts,
    List<Glob> paths,
    Set<Privilege> privileges) {

  Grant {
    tables = List.copyOf(tables);
    pathTexts = List.copyOf(pathTexts);
    paths = List.copyOf(paths);
    privileges = Set.copyOf(privileges);
  }

  boolean coversPath(String path) {
    for (Glob g : paths) if (g.matches(path)) return true;
    return false;
  }
}
