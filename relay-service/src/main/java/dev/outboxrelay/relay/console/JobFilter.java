package dev.outboxrelay.relay.console;

import static dev.outboxrelay.relay.web.ProblemException.badRequest;

import dev.outboxrelay.outbox.store.JobQuery;
import dev.outboxrelay.relay.web.RequestInput;
import jakarta.ws.rs.core.MultivaluedMap;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Set;

/**
 * The console's jobs filter, from the query string: {@code state, destination, ordering_key,
 * error_class} (exact), {@code operation_id} (contains, case-sensitive), {@code from}/{@code to}
 * (ISO-8601 with an offset; the job's creation, or for {@code state=D} the time it died, in {@code
 * [from, to)}), {@code after_id}, {@code limit} and {@code source}. Strict like the admin API: an
 * unknown or repeated parameter is a 400 naming it, an empty value counts as absent. The store
 * applies every condition in SQL ({@link #query()}), each a bound parameter.
 */
record JobFilter(
    Character state,
    String destination,
    String orderingKey,
    String errorClass,
    String operationId,
    Instant from,
    Instant to,
    long afterId,
    int limit) {

  static final int DEFAULT_PAGE_SIZE = 50;
  static final int MAX_PAGE_SIZE = 500;
  static final int MAX_NAME = 200;
  static final int MAX_ERROR_CLASS = 300;
  static final Set<String> PARAMETERS =
      Set.of(
          "state",
          "destination",
          "ordering_key",
          "error_class",
          "operation_id",
          "from",
          "to",
          "after_id",
          "limit",
          "source");

  static JobFilter of(MultivaluedMap<String, String> params) {
    RequestInput.queryParameters(params, PARAMETERS);
    String rawState = single(params, "state");
    Character state = rawState == null ? null : RequestInput.jobState(rawState, "state").code();
    Instant from = instant(single(params, "from"), "from");
    Instant to = instant(single(params, "to"), "to");
    if (from != null && to != null && !from.isBefore(to)) {
      throw badRequest("to", "to (" + to + ") must be after from (" + from + ")");
    }
    return new JobFilter(
        state,
        RequestInput.name(single(params, "destination"), "destination", MAX_NAME),
        RequestInput.name(single(params, "ordering_key"), "ordering_key", MAX_NAME),
        RequestInput.name(single(params, "error_class"), "error_class", MAX_ERROR_CLASS),
        RequestInput.name(single(params, "operation_id"), "operation_id", MAX_NAME),
        from,
        to,
        integer(single(params, "after_id"), "after_id", 0, Long.MAX_VALUE, 0),
        (int) integer(single(params, "limit"), "limit", 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE));
  }

  /** The store's query for this filter's page, one row longer (whether a next page exists). */
  JobQuery query() {
    return new JobQuery(
        state, destination, orderingKey, errorClass, operationId, from, to, afterId, limit + 1);
  }

  private static String single(MultivaluedMap<String, String> params, String name) {
    String v = params.getFirst(name);
    return v == null || v.isEmpty() ? null : v;
  }

  static long integer(String raw, String field, long min, long max, long absent) {
    if (raw == null || raw.isEmpty()) {
      return absent;
    }
    long v;
    try {
      v = Long.parseLong(raw.trim());
    } catch (NumberFormatException e) {
      throw badRequest(
          field,
          field
              + " must be an integer from "
              + min
              + " to "
              + max
              + ", was '"
              + abbreviate(raw)
              + "'");
    }
    if (v < min || v > max) {
      throw badRequest(field, field + " must be from " + min + " to " + max + ", was " + v);
    }
    return v;
  }

  private static Instant instant(String raw, String field) {
    if (raw == null) {
      return null;
    }
    Instant t;
    try {
      t = OffsetDateTime.parse(raw.trim()).toInstant();
    } catch (DateTimeParseException e) {
      throw badRequest(
          field,
          field
              + " must be an ISO-8601 date-time with an offset, e.g."
              + " 2024-05-01T12:00:00Z, was '"
              + abbreviate(raw)
              + "'");
    }
    // The database compares it: an instant no database stores is refused here, not failed there.
    return RequestInput.inRange(t, field);
  }

  private static String abbreviate(String s) {
    return s.length() <= 40 ? s : s.substring(0, 40) + "…";
  }
}
