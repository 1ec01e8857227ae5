package dev.outboxrelay.outbox;

import static dev.outboxrelay.outbox.OutboxConfig.MAX_CONTENT_TYPE_LENGTH;
import static dev.outboxrelay.outbox.OutboxConfig.MAX_HEADERS_JSON_LENGTH;
import static dev.outboxrelay.outbox.OutboxConfig.MAX_OPERATION_ID_LENGTH;
import static dev.outboxrelay.outbox.OutboxConfig.MAX_ORDERING_KEY_LENGTH;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.outbox.trace.TraceContextSource;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Checks a message against the configuration; throws {@link InvalidMessageException} naming the
 * field.
 */
final class MessageValidator {
  /**
   * A W3C traceparent a relay can continue: version 00 (or a later one, whose first four fields
   * keep this shape), non-zero trace and span ids.
   */
  private static final Pattern TRACEPARENT_VALUE =
      Pattern.compile(
          "(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}(-.*)?");

  /** HTTP token characters (RFC 9110): a header name must survive every sink. */
  private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}");

  static final String OPERATION_ID_RULE =
      "an operation ID is 1 to "
          + MAX_OPERATION_ID_LENGTH
          + " printable ASCII characters (U+0020 to U+007E, no space at either end), as an HTTP"
          + " Idempotency-Key, an AMQP message-id and a Kafka header carry them byte-for-byte";
  static final String CONTENT_TYPE_RULE =
      "a content type is 1 to "
          + MAX_CONTENT_TYPE_LENGTH
          + " printable ASCII characters (U+0020 to U+007E, no space at either end), as an HTTP"
          + " Content-Type, an AMQP content-type and a Kafka header carry them byte-for-byte";
  static final String HEADER_VALUE_RULE =
      "a header value is printable ASCII (U+0020 to U+007E)"
          + " and tab, neither at either end: an HTTP field value (RFC 9110) that AMQP and Kafka"
          + " headers also carry byte-for-byte";

  static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private final OutboxConfig config;

  MessageValidator(OutboxConfig config) {
    this.config = config;
  }

  /** Returns the headers as a JSON object, or null when there are none. */
  String validate(OutboxMessage m) {
    return validate(m, Map.of());
  }

  /**
   * As {@link #validate(OutboxMessage)}, storing {@code traceContext} (the active span's {@code
   * traceparent} and {@code tracestate}) with the headers unless the caller set {@code traceparent}
   * itself: the caller's trace context wins. The limit on the headers' JSON applies to the caller's
   * headers; the trace headers (at most about 600 characters) come on top, so turning tracing on
   * never makes a valid job invalid.
   */
  String validate(OutboxMessage m, Map<String, String> traceContext) {
    if (m == null) {
      throw new InvalidMessageException("message", "is required");
    }
    requireWireText(
        "operation_id", "", m.operationId(), MAX_OPERATION_ID_LENGTH, false, OPERATION_ID_RULE);
    requireText("destination", m.destination(), Integer.MAX_VALUE);
    if (!config.destinations().contains(m.destination())) {
      throw new InvalidMessageException(
          "destination",
          "'"
              + m.destination()
              + "' is not a configured destination; known: "
              + new TreeSet<>(config.destinations()));
    }
    requireWireText(
        "content_type", "", m.contentType(), MAX_CONTENT_TYPE_LENGTH, false, CONTENT_TYPE_RULE);
    if (m.orderingKey() != null) {
      requireText("ordering_key", m.orderingKey(), MAX_ORDERING_KEY_LENGTH);
    }
    if (m.payload() == null) {
      throw new InvalidMessageException("payload", "is required (use \"\" for an empty body)");
    }
    int bytes = utf8Length(m.payload());
    if (bytes > config.maxPayloadBytes()) {
      throw new InvalidMessageException(
          "payload",
          "is "
              + bytes
              + " bytes; the limit is "
              + config.maxPayloadBytes()
              + " bytes (maxPayloadBytes, outbox.producer.max-payload-bytes). Payloads over "
              + config.inlinePayloadBytes()
              + " bytes are already stored out of band in"
              + " outbox_payload; a body this large belongs in your application's own tables or"
              + " blob store, written in the same transaction, with only a reference to it (e.g."
              + " its business ID) in the payload for the receiver to read (README, \"Large"
              + " payloads\")");
    }
    rejectLoneSurrogate("payload", "", m.payload());
    if (isJson(m.contentType())) {
      try {
        if (JSON.readTree(m.payload()).isMissingNode()) {
          // Jackson reads "" and white space as "no value" rather than an error.
          throw new InvalidMessageException(
              "payload", "is empty; content_type " + m.contentType() + " needs a JSON value");
        }
      } catch (JsonProcessingException e) {
        throw new InvalidMessageException(
            "payload",
            "is not valid JSON for content_type "
                + m.contentType()
                + ": "
                + e.getOriginalMessage());
      }
    }
    requireDelayInRange(m.deliverAfter());
    return headersJson(m.headers(), traceContext);
  }

  /**
   * Refuses a delay below zero or over {@link OutboxConfig#MAX_DELIVER_AFTER}, without any
   * arithmetic on it (so even {@code Duration.ofSeconds(Long.MAX_VALUE)} gets this answer).
   */
  static void requireDelayInRange(Duration delay) {
    if (delay.isNegative()) {
      throw new InvalidMessageException("deliver_after", "delay must not be negative: " + delay);
    }
    if (delay.compareTo(OutboxConfig.MAX_DELIVER_AFTER) > 0) {
      throw new InvalidMessageException(
          "deliver_after",
          "delay "
              + delay
              + " is over the limit of "
              + OutboxConfig.MAX_DELIVER_AFTER.toDays()
              + " days (five years, OutboxConfig.MAX_DELIVER_AFTER);"
              + " a job due further ahead belongs in your own tables until it comes due");
    }
  }

  private static String headersJson(Map<String, String> headers, Map<String, String> traceContext) {
    if (headers.isEmpty() && traceContext.isEmpty()) {
      return null;
    }
    for (Map.Entry<String, String> h : headers.entrySet()) {
      if (h.getKey() == null || !HEADER_NAME.matcher(h.getKey()).matches()) {
        rejectNonTokenCharacter(h.getKey());
        throw new InvalidMessageException(
            "headers",
            "name '" + h.getKey() + "' is not a valid header name (1-100 token characters)");
      }
      if (h.getValue() == null) {
        throw new InvalidMessageException("headers", "value of '" + h.getKey() + "' is missing");
      }
      requireWireChars(
          "headers", "value of '" + h.getKey() + "'", h.getValue(), true, HEADER_VALUE_RULE);
    }
    String callerParent = headerIgnoringCase(headers, TraceContextSource.TRACEPARENT);
    if (callerParent != null && !TRACEPARENT_VALUE.matcher(callerParent).matches()) {
      throw new InvalidMessageException(
          "headers",
          "value of '"
              + TraceContextSource.TRACEPARENT
              + "' is not a W3C traceparent (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>): '"
              + callerParent
              + "'; leave it out to store the active span's");
    }
    if (callerParent == null
        && headerIgnoringCase(headers, TraceContextSource.TRACESTATE) != null) {
      throw new InvalidMessageException(
          "headers",
          "'"
              + TraceContextSource.TRACESTATE
              + "' needs a '"
              + TraceContextSource.TRACEPARENT
              + "' beside it; leave both out to store"
              + " the active span's");
    }
    try {
      if (!headers.isEmpty()) {
        int length = JSON.writeValueAsString(headers).length();
        if (length > MAX_HEADERS_JSON_LENGTH) {
          throw new InvalidMessageException(
              "headers",
              "take " + length + " characters as JSON; the limit is " + MAX_HEADERS_JSON_LENGTH);
        }
      }
      Map<String, String> stored = headers;
      if (callerParent == null && !traceContext.isEmpty()) {
        stored = new LinkedHashMap<>(headers);
        stored.putAll(traceContext);
      }
      return stored.isEmpty() ? null : JSON.writeValueAsString(stored);
    } catch (JsonProcessingException e) {
      throw new InvalidMessageException(
          "headers", "cannot be written as JSON: " + e.getOriginalMessage());
    }
  }

  /** Names the first character of {@code name} that is no HTTP token character, if any. */
  private static void rejectNonTokenCharacter(String name) {
    if (name == null) {
      return;
    }
    int position = 0;
    for (int i = 0; i < name.length(); ) {
      int cp = name.codePointAt(i);
      position++;
      if (cp > 0x7E || !HEADER_NAME.matcher(Character.toString(cp)).matches()) {
        throw new InvalidCharacterException(
            "headers",
            "name '" + name + "'",
            cp,
            position,
            "is not allowed: a header name is 1 to 100 HTTP token characters (letters, digits and"
                + " !#$%&'*+-.^_`|~)");
      }
      i += Character.charCount(cp);
    }
  }

  private static String headerIgnoringCase(Map<String, String> headers, String name) {
    for (Map.Entry<String, String> h : headers.entrySet()) {
      if (h.getKey().equalsIgnoreCase(name)) {
        return h.getValue();
      }
    }
    return null;
  }

  /** The UTF-8 length of {@code s} without encoding it (payloads may be a megabyte). */
  static int utf8Length(String s) {
    long bytes = 0;
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch < 0x80) {
        bytes++;
      } else if (ch < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(ch)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        bytes += 4;
        i++;
      } else if (Character.isSurrogate(ch)) {
        bytes++; // a lone surrogate is encoded as '?', as String.getBytes(UTF_8) does
      } else {
        bytes += 3;
      }
    }
    return (int) Math.min(Integer.MAX_VALUE, bytes);
  }

  static boolean isJson(String contentType) {
    String base = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    return base.equals("application/json") || base.endsWith("+json");
  }

  private static void requireText(String field, String value, int maxLength) {
    if (value == null || value.isBlank()) {
      throw new InvalidMessageException(field, "is required");
    }
    if (value.length() > maxLength) {
      throw new InvalidMessageException(
          field, "is " + value.length() + " characters long; the limit is " + maxLength);
    }
    if (value.chars().anyMatch(Character::isISOControl)) {
      throw new InvalidMessageException(field, "must not contain control characters");
    }
    if (!value.equals(value.strip())) {
      throw new InvalidMessageException(field, "must not start or end with white space");
    }
    rejectLoneSurrogate(field, "", value);
  }

  /**
   * A required field of printable ASCII that every sink carries unchanged ({@link
   * #requireWireChars}); the length limit counts characters, which are bytes here.
   */
  private static void requireWireText(
      String field, String subject, String value, int maxLength, boolean tab, String rule) {
    if (value == null || value.isBlank()) {
      throw new InvalidMessageException(field, "is required");
    }
    requireWireChars(field, subject, value, tab, rule);
    if (value.length() > maxLength) {
      throw new InvalidMessageException(
          field, "is " + value.length() + " characters long; the limit is " + maxLength);
    }
  }

  /**
   * Printable ASCII (U+0020 to U+007E, and tab when {@code tab}), neither starting nor ending with
   * white space: an HTTP field value (RFC 9110 section 5.5) the JDK client writes byte-for-byte and
   * a receiver reads back unchanged (it strips white space at either end), an AMQP short string or
   * header and a Kafka header, all unchanged. Refuses with the first offending character and its
   * position.
   */
  private static void requireWireChars(
      String field, String subject, String value, boolean tab, String rule) {
    int position = 0;
    for (int i = 0; i < value.length(); ) {
      int cp = value.codePointAt(i);
      position++;
      if (!(cp >= 0x20 && cp <= 0x7E) && !(tab && cp == '\t')) {
        throw new InvalidCharacterException(
            field, subject, cp, position, "is not allowed: " + rule);
      }
      i += Character.charCount(cp);
    }
    if (value.isEmpty()) {
      return;
    }
    if (isBlankChar(value.charAt(0))) {
      throw new InvalidCharacterException(
          field,
          subject,
          value.charAt(0),
          1,
          "is white space at the start, which a receiver strips: " + rule);
    }
    if (isBlankChar(value.charAt(value.length() - 1))) {
      throw new InvalidCharacterException(
          field,
          subject,
          value.charAt(value.length() - 1),
          position,
          "is white space at the end, which a receiver strips: " + rule);
    }
  }

  private static boolean isBlankChar(char c) {
    return c == ' ' || c == '\t';
  }

  /**
   * Refuses a lone surrogate: no Unicode character, stored and sent as {@code ?}, so {@code
   * a\uD800b} would become the same text as {@code a?b}.
   */
  private static void rejectLoneSurrogate(String field, String subject, String value) {
    int position = 0;
    for (int i = 0; i < value.length(); i++) {
      char ch = value.charAt(i);
      position++;
      if (Character.isHighSurrogate(ch)
          && i + 1 < value.length()
          && Character.isLowSurrogate(value.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(ch)) {
        throw new InvalidCharacterException(
            field,
            subject,
            ch,
            position,
            "is not allowed: text is stored and sent as UTF-8, which has no encoding for it");
      }
    }
  }
}
