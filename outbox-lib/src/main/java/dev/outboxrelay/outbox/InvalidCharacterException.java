package dev.outboxrelay.outbox;

import java.util.Locale;

/**
 * A field holds a character that some sink cannot carry byte-for-byte (or that is no Unicode
 * character at all, such as a lone surrogate), or white space where it would be lost. Nothing was
 * written. {@link #field()} names the column, {@link #codePoint()} the character and {@link
 * #position()} where it is, counted in characters from 1 (a character outside the Basic
 * Multilingual Plane counts once).
 */
public class InvalidCharacterException extends InvalidMessageException {
  private final int codePoint;
  private final int position;

  /**
   * @param subject what within the field, e.g. {@code value of 'X-Tenant'}, or empty
   * @param rule why, and what the field may hold
   */
  public InvalidCharacterException(
      String field, String subject, int codePoint, int position, String rule) {
    super(
        field,
        (subject.isEmpty() ? "" : subject + ": ")
            + "character "
            + describe(codePoint)
            + " at position "
            + position
            + " "
            + rule);
    this.codePoint = codePoint;
    this.position = position;
  }

  /** The offending character's code point (a lone surrogate's own value). */
  public int codePoint() {
    return codePoint;
  }

  /** Where it is, in characters from 1. */
  public int position() {
    return position;
  }

  /** {@code U+00E4 (LATIN SMALL LETTER A WITH DIAERESIS)}; a lone surrogate is said to be one. */
  static String describe(int codePoint) {
    String hex = "U+" + String.format(Locale.ROOT, "%04X", codePoint);
    if (Character.isSurrogate((char) codePoint) && codePoint <= Character.MAX_VALUE) {
      return hex + " (a lone surrogate, no Unicode character)";
    }
    String name = Character.getName(codePoint);
    return name == null ? hex : hex + " (" + name + ")";
  }
}
