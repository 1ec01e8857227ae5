package dev.outboxrelay.outbox;

import static dev.outboxrelay.outbox.OutboxConfig.MAX_CONTENT_TYPE_LENGTH;
import static dev.outboxrelay.outbox.OutboxConfig.MAX_HEADERS_JSON_LENGTH;
import static dev.outboxrelay.outbox.OutboxConfig.MAX_OPERATION_ID_LENGTH;
import static dev.outboxrelay.outbox.OutboxConfig.MAX_ORDERING_KEY_LENGTH;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.outbox.trace.TraceContextSource;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;

/** Checks a message against the configuration; throws {@link InvalidMessageException} naming the field. */
final class MessageValidator {
  /** HTTP token characters (RFC 9110): a header name must survive every sink. */
  /**
   * A W3C traceparent a relay can continue: version 00 (or a later one, whose first four fields
   * keep this shape), non-zero trace and span ids.
   */
  private static final Pattern TRACEPARENT_VALUE = Pattern.compile(
      "(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}(-.*)?");
  private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}");

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
    requireText("operation_id", m.operationId(), MAX_OPERATION_ID_LENGTH);
    requireText("destination", m.destination(), Integer.MAX_VALUE);
    if (!config.destinations().contains(m.destination())) {
      throw new InvalidMessageException(
          "destination",
          "'" + m.destination() + "' is not a configured destination; known: "
              + new TreeSet<>(config.destinations()));
    }
    requireText("content_type", m.contentType(), MAX_CONTENT_TYPE_LENGTH);
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
          "is " + bytes + " bytes; the limit is " + config.maxPayloadBytes()
              + " bytes (maxPayloadBytes, outbox.producer.max-payload-bytes). Payloads over "
              + config.inlinePayloadBytes() + " bytes are already stored out of band in"
              + " outbox_payload; a body this large belongs in your application's own tables or"
              + " blob store, written in the same transaction, with only a reference to it (e.g."
              + " its business ID) in the payload for the receiver to read (README, \"Large"
              + " payloads\")");
    }
    if (isJson(m.contentType())) {
      try {
        if (JSON.readTree(m.payload()).isMissingNode()) {
          // Jackson reads "" and white space as "no value" rather than an error.
          throw new InvalidMessageException(
              "payload", "is empty; content_type " + m.contentType() + " needs a JSON value");
        }
      } catch (JsonProcessingException e) {
        throw new InvalidMessageException(
            "payload", "is not valid JSON for content_type " + m.contentType() + ": "
                + e.getOriginalMessage());
      }
    }
    if (m.deliverAfter().isNegative()) {
      throw new InvalidMessageException("deliver_after", "delay must not be negative: " + m.deliverAfter());
    }
    return headersJson(m.headers(), traceContext);
  }

  private static String headersJson(Map<String, String> headers, Map<String, String> traceContext) {
    if (headers.isEmpty() && traceContext.isEmpty()) {
      return null;
    }
    for (Map.Entry<String, String> h : headers.entrySet()) {
      if (h.getKey() == null || !HEADER_NAME.matcher(h.getKey()).matches()) {
        throw new InvalidMessageException(
            "headers", "name '" + h.getKey() + "' is not a valid header name (1-100 token characters)");
      }
      if (h.getValue() == null || h.getValue().chars().anyMatch(c -> c < 0x20 && c != '\t')) {
        throw new InvalidMessageException(
            "headers", "value of '" + h.getKey() + "' is missing or contains control characters");
      }
    }
    String callerParent = headerIgnoringCase(headers, TraceContextSource.TRACEPARENT);
    if (callerParent != null && !TRACEPARENT_VALUE.matcher(callerParent).matches()) {
      throw new InvalidMessageException("headers", "value of '" + TraceContextSource.TRACEPARENT
          + "' is not a W3C traceparent (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>): '"
          + callerParent + "'; leave it out to store the active span's");
    }
    if (callerParent == null && headerIgnoringCase(headers, TraceContextSource.TRACESTATE) != null) {
      throw new InvalidMessageException("headers", "'" + TraceContextSource.TRACESTATE
          + "' needs a '" + TraceContextSource.TRACEPARENT + "' beside it; leave both out to store"
          + " the active span's");
    }
    try {
      if (!headers.isEmpty()) {
        int length = JSON.writeValueAsString(headers).length();
        if (length > MAX_HEADERS_JSON_LENGTH) {
          throw new InvalidMessageException(
              "headers", "take " + length + " characters as JSON; the limit is " + MAX_HEADERS_JSON_LENGTH);
        }
      }
      Map<String, String> stored = headers;
      if (callerParent == null && !traceContext.isEmpty()) {
        stored = new LinkedHashMap<>(headers);
        stored.putAll(traceContext);
      }
      return stored.isEmpty() ? null : JSON.writeValueAsString(stored);
    } catch (JsonProcessingException e) {
      throw new InvalidMessageException("headers", "cannot be written as JSON: " + e.getOriginalMessage());
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
      } else if (Character.isHighSurrogate(ch) && i + 1 < s.length()
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
  }
}
