package dev.outboxrelay.outbox.jdbc;

/** Text fitted to the width of the column it is stored in. */
public final class Columns {
  /** The width of the error, diagnosis and response columns ({@code last_error}, ...). */
  public static final int MAX_TEXT = 2000;

  private Columns() {}

  /**
   * {@code s} cut to {@code max} characters, its last one an ellipsis when cut; null stays null.
   */
  public static String truncate(String s, int max) {
    return s == null || s.length() <= max ? s : s.substring(0, max - 1) + "…";
  }
}
