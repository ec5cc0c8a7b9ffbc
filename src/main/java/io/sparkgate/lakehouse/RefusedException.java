package io.sparkgate.lakehouse;

/**
 * A time-travel clause that cannot be rewritten safely. {@link #getMessage()} is the text for the user (it
 * names the table and the working alternative); {@link #reason()} is the short cause, for the audit log.
 */
public final class RefusedException extends Exception {
  private static final long serialVersionUID = 1L;

  private final String table;
  private final String reason;

  RefusedException(String table, String reason, String message) {
    super(message);
    this.table = table;
    this.reason = reason;
  }

  /** The qualified table (catalog.database.name), or empty when the refusal is not about one table. */
  public String table() {
    return table;
  }

  public String reason() {
    return reason;
  }
}
