package dev.outboxrelay.relay.web;

import static dev.outboxrelay.relay.web.ProblemException.badRequest;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.outboxrelay.outbox.store.JobState;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response.Status;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The rules every endpoint of the admin and reconciliation APIs applies to its input, so that one
 * request is refused the same way wherever it is sent. Each refusal is a {@link ProblemException}
 * naming the field, thrown before anything is read from or written to a database:
 *
 * <ul>
 *   <li>query parameters: an unknown one, or one given twice, is a 400 (a mistyped filter must not
 *       silently widen what an operator looks at or acts on);
 *   <li>ids and integers: ASCII digits only (an optional leading {@code -} for integers), no
 *       surrounding blanks, no other scripts' digits, no control characters;
 *   <li>JSON bodies: {@code Content-Type} {@code application/json} (or {@code application/*+json})
 *       when there is a body, else 415; duplicate keys and anything after the value are a 400;
 *   <li>instants: within {@link #EARLIEST} and {@link #LATEST}, what every supported database
 *       stores, else a 400 (never a database error answered as 503).
 * </ul>
 */
public final class RequestInput {
  private RequestInput() {}

  /**
   * The earliest instant the API accepts: MariaDB's {@code DATETIME} starts at year 1000
   * (PostgreSQL's {@code timestamptz}, SQL Server's {@code datetime2} and H2 reach further back).
   */
  public static final Instant EARLIEST = Instant.parse("1000-01-01T00:00:00Z");

  /**
   * The latest instant the API accepts: MariaDB's {@code DATETIME(3)} and SQL Server's {@code
   * datetime2} end with year 9999 (PostgreSQL's {@code timestamptz} and H2 reach further).
   */
  public static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999Z");

  /** Strict JSON: duplicate keys and anything after the value are errors, not silently resolved. */
  private static final ObjectReader JSON =
      new ObjectMapper()
          .reader()
          .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  /** Longest digit string a {@code long} can need: 19 digits. */
  private static final int MAX_DIGITS = 19;

  /**
   * Refuses a query parameter that is not in {@code known} or is given more than once.
   *
   * @param known the parameters the endpoint reads; empty when it reads none
   */
  public static void queryParameters(MultivaluedMap<String, String> params, Set<String> known) {
    for (Map.Entry<String, List<String>> p : params.entrySet()) {
      String name = p.getKey();
      if (!known.contains(name)) {
        throw badRequest(
            name,
            "unknown query parameter '"
                + printable(name)
                + "'; "
                + (known.isEmpty()
                    ? "this endpoint takes none"
                    : "known: " + String.join(", ", new TreeSet<>(known))));
      }
      if (p.getValue().size() > 1) {
        throw badRequest(
            name,
            "query parameter '"
                + name
                + "' is given "
                + p.getValue().size()
                + " times; give it once");
      }
    }
  }

  /** An id from the path: ASCII digits, from 1 to {@link Long#MAX_VALUE}. */
  public static long id(String raw, String field) {
    if (raw == null || raw.isEmpty()) {
      throw badRequest(field, field + " is required");
    }
    return integer(raw, field, 1, Long.MAX_VALUE);
  }

  /**
   * An integer written in ASCII digits with an optional leading {@code -}, from {@code min} to
   * {@code max}; a blank, a {@code +}, a decimal point or any other character is refused.
   */
  public static long integer(String raw, String field, long min, long max) {
    String digits = raw.startsWith("-") ? raw.substring(1) : raw;
    boolean ascii =
        !digits.isEmpty()
            && digits.length() <= MAX_DIGITS
            && digits.chars().allMatch(c -> c >= '0' && c <= '9');
    long v;
    try {
      if (!ascii) {
        throw new NumberFormatException();
      }
      v = Long.parseLong(raw);
    } catch (NumberFormatException e) {
      throw badRequest(
          field,
          field
              + " must be an integer from "
              + min
              + " to "
              + max
              + " in ASCII digits, was '"
              + printable(raw)
              + "'");
    }
    if (v < min || v > max) {
      throw badRequest(field, field + " must be from " + min + " to " + max + ", was " + v);
    }
    return v;
  }

  /**
   * A job state as one letter in any case ({@link JobState#parse}); else a 400 naming {@code
   * field}.
   */
  public static JobState jobState(String raw, String field) {
    try {
      return JobState.parse(raw, field);
    } catch (IllegalArgumentException e) {
      throw badRequest(field, e.getMessage());
    }
  }

  /**
   * A name-like text field (destination, ordering key, error class, reason): at most {@code max}
   * characters and no control characters; {@code null} stays {@code null}.
   */
  public static String name(String value, String field, int max) {
    if (value == null) {
      return null;
    }
    if (value.length() > max) {
      throw badRequest(field, field + " is longer than " + max + " characters");
    }
    if (value.chars().anyMatch(Character::isISOControl)) {
      throw badRequest(field, field + " contains control characters");
    }
    return value;
  }

  /**
   * {@code t} when it lies within [{@link #EARLIEST}, {@link #LATEST}], else a 400 naming {@code
   * field}.
   */
  public static Instant inRange(Instant t, String field) {
    if (t != null && (t.isBefore(EARLIEST) || t.isAfter(LATEST))) {
      throw badRequest(
          field,
          field
              + " ("
              + t
              + ") is out of range: instants from "
              + EARLIEST
              + " to "
              + LATEST
              + " are accepted (what every supported database stores)");
    }
    return t;
  }

  /**
   * The request body as a JSON object, or null when there is none (no bytes, or only blanks). A
   * body sent with any {@code Content-Type} but JSON is a 415, whatever it looks like: an operator
   * action is not guessed from a form or an XML document.
   */
  public static JsonNode jsonObject(String contentType, String body) {
    if (body == null || body.isBlank()) {
      return null;
    }
    if (!isJson(contentType)) {
      throw new ProblemException(
          Status.UNSUPPORTED_MEDIA_TYPE,
          "Content-Type",
          "the body must be JSON sent"
              + " with Content-Type: application/json, was "
              + (contentType == null || contentType.isBlank()
                  ? "no Content-Type"
                  : "'" + printable(contentType) + "'"));
    }
    JsonNode root;
    try {
      root = JSON.readTree(body);
    } catch (StreamReadException e) {
      String duplicate = duplicateKey(e);
      if (duplicate != null) {
        throw badRequest(
            duplicate,
            "request body is not valid JSON: property '"
                + duplicate
                + "' is given twice; give it once");
      }
      throw badRequest(
          ProblemMappers.BODY, "request body is not valid JSON: " + e.getOriginalMessage());
    } catch (JacksonException e) {
      throw badRequest(
          ProblemMappers.BODY, "request body is not valid JSON: " + e.getOriginalMessage());
    }
    if (root == null || !root.isObject()) {
      throw badRequest(
          ProblemMappers.BODY,
          "request body must be a JSON object, was "
              + (root == null ? "empty" : root.getNodeType().name().toLowerCase(Locale.ROOT)));
    }
    return root;
  }

  /**
   * {@code application/json} or {@code application/<anything>+json}, parameters (charset) aside.
   */
  static boolean isJson(String contentType) {
    if (contentType == null) {
      return false;
    }
    String type = contentType.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
    return type.equals("application/json")
        || (type.startsWith("application/") && type.endsWith("+json"));
  }

  /** The key that STRICT_DUPLICATE_DETECTION refused, or null for any other parse error. */
  private static String duplicateKey(StreamReadException e) {
    if (e.getOriginalMessage() == null
        || !e.getOriginalMessage().startsWith("Duplicate field")
        || e.getProcessor() == null) {
      return null;
    }
    try {
      return e.getProcessor().currentName();
    } catch (RuntimeException | IOException notKnown) {
      return null;
    }
  }

  /** Echoes bad input back shortened and with control characters escaped (a NUL, a newline). */
  public static String printable(String s) {
    StringBuilder b = new StringBuilder();
    s.codePoints()
        .limit(40)
        .forEach(
            c -> {
              if (Character.isISOControl(c)) {
                b.append(String.format(Locale.ROOT, "\\u%04X", c));
              } else {
                b.appendCodePoint(c);
              }
            });
    return s.codePointCount(0, s.length()) > 40 ? b + "…" : b.toString();
  }
}
