package dev.outboxrelay.relay.admin;

import static dev.outboxrelay.relay.web.ProblemException.badRequest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.outboxrelay.outbox.store.DeadJobFilter;
import dev.outboxrelay.outbox.store.JobQuery;
import dev.outboxrelay.relay.web.ProblemMappers;
import dev.outboxrelay.relay.web.RequestInput;
import jakarta.ws.rs.core.MultivaluedMap;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.Set;

/**
 * Reads and validates the admin API's input: query parameters, path ids and JSON bodies. Every
 * refusal is a {@link dev.outboxrelay.relay.web.ProblemException} (400) naming the field, thrown
 * before anything is read from or written to the database. Input is strict on purpose: an unknown
 * parameter or property is refused rather than ignored, because a mistyped filter (say {@code
 * ?stat=D}, or {@code "destinaton"} in a bulk replay) would otherwise silently widen what an
 * operator looks at or acts on.
 */
final class AdminInput {
  private AdminInput() {}

  static final int DEFAULT_PAGE_SIZE = 50;
  static final int MAX_PAGE_SIZE = 500;

  /** Jobs one bulk replay moves at most, unless the request says otherwise. */
  static final int DEFAULT_BULK_LIMIT = 1_000;

  static final int MAX_BULK_LIMIT = 10_000;

  /** Column widths: destination and ordering_key are varchar(200), error_class varchar(300). */
  static final int MAX_NAME = 200;

  static final int MAX_ERROR_CLASS = 300;
  static final int MAX_REASON = 500;

  static final Set<String> LIST_PARAMETERS =
      Set.of("state", "destination", "ordering_key", "limit", "after_id", "source");

  /** What every other admin endpoint takes: {@code ?source=} (read by {@link AdminService}). */
  static final Set<String> SOURCE_ONLY = Set.of("source");

  static final Set<String> BULK_FIELDS =
      Set.of(
          "destination",
          "error_class",
          "dead_from",
          "dead_to",
          "ordering_key",
          "dry_run",
          "limit",
          "all");

  /** A validated bulk replay: which dead jobs, and whether to only count them. */
  record BulkReplay(DeadJobFilter filter, boolean dryRun, int limit) {}

  // ---- query and path --------------------------------------------------------------------------

  /**
   * {@code state, destination, ordering_key, limit, after_id} (and {@code source}, read by {@link
   * AdminService}); an empty value counts as absent. Fetches one row more than the page so the
   * caller can tell whether another page follows.
   */
  static JobQuery listQuery(MultivaluedMap<String, String> params) {
    RequestInput.queryParameters(params, LIST_PARAMETERS);
    String state = single(params, "state");
    Character s = state == null ? null : RequestInput.jobState(state, "state").code();
    String destination = RequestInput.name(single(params, "destination"), "destination", MAX_NAME);
    String orderingKey =
        RequestInput.name(single(params, "ordering_key"), "ordering_key", MAX_NAME);
    int limit =
        (int) integer(single(params, "limit"), "limit", 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE);
    long afterId = integer(single(params, "after_id"), "after_id", 0, Long.MAX_VALUE, 0);
    return new JobQuery(s, destination, orderingKey, afterId, limit + 1);
  }

  /** A job id from the path: ASCII digits, a positive integer. */
  static long id(String raw) {
    return RequestInput.id(raw, "id");
  }

  private static String single(MultivaluedMap<String, String> params, String name) {
    String v = params.getFirst(name);
    return v == null || v.isEmpty() ? null : v;
  }

  private static long integer(String raw, String field, long min, long max, long absent) {
    return raw == null || raw.isEmpty() ? absent : RequestInput.integer(raw, field, min, max);
  }

  // ---- JSON bodies -----------------------------------------------------------------------------

  /**
   * The optional body of a cancel: {@code {"reason": "..."}} or nothing. The reason lands in the
   * job's {@code last_error} and the log line, so it is short, one line.
   */
  static String cancelReason(String contentType, String body) {
    JsonNode root = RequestInput.jsonObject(contentType, body);
    if (root == null) {
      return null;
    }
    for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (!f.equals("reason")) {
        throw badRequest(f, "unknown property '" + f + "'; known: reason");
      }
    }
    return RequestInput.name(text(root, "reason"), "reason", MAX_REASON);
  }

  /**
   * A bulk replay: {@code destination, error_class, ordering_key} (exact matches), {@code
   * dead_from} (inclusive) and {@code dead_to} (exclusive) as ISO-8601 date-times with an offset,
   * {@code dry_run} (default true), {@code limit} (default {@value #DEFAULT_BULK_LIMIT}) and {@code
   * all}. A filter without conditions is refused unless {@code "all": true}, and {@code all} cannot
   * be combined with conditions: replaying every dead job must be said explicitly.
   */
  static BulkReplay bulkReplay(String contentType, String body) {
    JsonNode root = RequestInput.jsonObject(contentType, body);
    if (root == null) {
      throw badRequest(
          ProblemMappers.BODY,
          "a JSON object is required: the filter of dead jobs to"
              + " replay, e.g. {\"destination\":\"billing\",\"error_class\":\"HTTP 422\",\"dry_run\":true}");
    }
    for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (!BULK_FIELDS.contains(f)) {
        throw badRequest(
            f,
            "unknown property '"
                + f
                + "'; known: destination, error_class, dead_from,"
                + " dead_to, ordering_key, dry_run, limit, all");
      }
    }
    String destination = RequestInput.name(text(root, "destination"), "destination", MAX_NAME);
    String errorClass =
        RequestInput.name(text(root, "error_class"), "error_class", MAX_ERROR_CLASS);
    String orderingKey = RequestInput.name(text(root, "ordering_key"), "ordering_key", MAX_NAME);
    Instant deadFrom = instant(root, "dead_from");
    Instant deadTo = instant(root, "dead_to");
    if (deadFrom != null && deadTo != null && !deadFrom.isBefore(deadTo)) {
      throw badRequest(
          "dead_to", "dead_to (" + deadTo + ") must be after dead_from (" + deadFrom + ")");
    }
    boolean dryRun = bool(root, "dry_run", true);
    boolean all = bool(root, "all", false);
    int limit = limit(root);
    DeadJobFilter filter =
        new DeadJobFilter(destination, errorClass, deadFrom, deadTo, orderingKey);
    if (filter.isEmpty() && !all) {
      throw badRequest(
          "all",
          "the filter is empty and would take every dead job: name at least one of"
              + " destination, error_class, dead_from, dead_to, ordering_key, or send \"all\": true");
    }
    if (!filter.isEmpty() && all) {
      throw badRequest(
          "all", "\"all\": true takes every dead job and cannot be combined with a filter");
    }
    return new BulkReplay(filter, dryRun, limit);
  }

  /** A string property, or null when absent or JSON null. */
  private static String text(JsonNode root, String field) {
    JsonNode v = root.get(field);
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isTextual()) {
      throw badRequest(
          field, field + " must be a string, was " + v.getNodeType().name().toLowerCase());
    }
    if (v.asText().isEmpty()) {
      throw badRequest(field, field + " must not be empty (leave it out to match any)");
    }
    return v.asText();
  }

  private static boolean bool(JsonNode root, String field, boolean absent) {
    JsonNode v = root.get(field);
    if (v == null || v.isNull()) {
      return absent;
    }
    if (!v.isBoolean()) {
      throw badRequest(field, field + " must be true or false, was " + abbreviate(v.toString()));
    }
    return v.booleanValue();
  }

  private static int limit(JsonNode root) {
    JsonNode v = root.get("limit");
    if (v == null || v.isNull()) {
      return DEFAULT_BULK_LIMIT;
    }
    if (!v.isIntegralNumber() || !v.canConvertToLong()) {
      throw badRequest(
          "limit",
          "limit must be an integer from 1 to "
              + MAX_BULK_LIMIT
              + ", was "
              + abbreviate(v.toString()));
    }
    long limit = v.longValue();
    if (limit < 1 || limit > MAX_BULK_LIMIT) {
      throw badRequest("limit", "limit must be from 1 to " + MAX_BULK_LIMIT + ", was " + limit);
    }
    return (int) limit;
  }

  private static Instant instant(JsonNode root, String field) {
    String raw = text(root, field);
    if (raw == null) {
      return null;
    }
    Instant t;
    try {
      t = OffsetDateTime.parse(raw).toInstant();
    } catch (DateTimeParseException e) {
      throw badRequest(
          field,
          field
              + " must be an ISO-8601 date-time with an offset, e.g."
              + " 2024-05-01T12:00:00Z, was '"
              + abbreviate(raw)
              + "'");
    }
    return RequestInput.inRange(t, field);
  }

  /** Echoes bad input back shortened, so a huge value does not make a huge error. */
  private static String abbreviate(String s) {
    return RequestInput.printable(s);
  }
}
