package io.sparkgate.grants;

import java.util.List;

/**
 * A grant a principal holds, for access review ({@link DataAccess#what}).
 *
 * @param to whom the grant's {@code to:} names, as the policy writes it
 * @param tables the grant's table patterns, {@code {principal}} replaced by the principal's name
 * @param paths the grant's path globs
 * @param privileges labels, in {@link Privilege} order
 */
public record Holding(
    String grant, String to, List<String> tables, List<String> paths, List<String> privileges) {
  public Holding {
    tables = List.copyOf(tables);
    paths = List.copyOf(paths);
    privileges = List.copyOf(privileges);
  }
}
