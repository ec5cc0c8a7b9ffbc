package io.sparkgate.grants;

import java.util.List;
import java.util.Optional;

/**
 * A grant that covers a table or path, for access review ({@link DataAccess#who}).
 *
 * @param to whom the grant's {@code to:} names, as the policy writes it
 * @param privileges labels, in {@link Privilege} order
 * @param pattern the grant's table or path pattern that covers it
 * @param principal for a {@code {principal}} pattern, the one principal it covers the table for (only that
 *     principal holds it, and only if {@code to} takes them too); empty otherwise
 */
public record Coverage(
    String grant, String to, List<String> privileges, String pattern, Optional<String> principal) {
  public Coverage {
    privileges = List.copyOf(privileges);
  }
}
