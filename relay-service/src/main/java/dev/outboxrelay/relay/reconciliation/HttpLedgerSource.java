package dev.outboxrelay.relay.reconciliation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.outbox.store.Confirmation;
import dev.outboxrelay.outbox.store.ReconciliationStore;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An HTTP ledger in the demo sink's format: {@code GET <url>?since=<instant>&limit=<n>} answers
 * {@code {"items":[{"operationId","destination","messageId","appliedAt","deliveries",
 * "appliedCount"}],"next":<instant or null>}}, entries applied strictly after {@code since}, in
 * time order; {@code next} is the {@code since} of the next page. Entries naming another
 * destination are skipped (one ledger may serve several); several entries of one operation ID add
 * up their application counts.
 */
final class HttpLedgerSource implements ConfirmationSource {
  static final int PAGE_SIZE = 1000;

  /** A ledger whose {@code next} never ends would keep a run forever. */
  static final int MAX_PAGES = 10_000;

  private static final ObjectMapper JSON = new ObjectMapper();

  private final String destination;
  private final URI url;
  private final Duration requestTimeout;
  private final HttpClient client;
  private final ReconciliationStore store;

  HttpLedgerSource(
      String destination,
      URI url,
      Duration connectTimeout,
      Duration requestTimeout,
      ReconciliationStore store) {
    this.destination = destination;
    this.url = url;
    this.requestTimeout = requestTimeout;
    this.store = store;
    this.client =
        HttpClient.newBuilder()
            .connectTimeout(connectTimeout)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
  }

  @Override
  public String type() {
    return ReconciliationSettings.HTTP_LEDGER;
  }

  @Override
  public int collect(Instant since) {
    Map<String, Confirmation> byOperation = new LinkedHashMap<>();
    Instant cursor = since;
    for (int page = 0; ; page++) {
      if (page == MAX_PAGES) {
        throw new ConfirmationSourceException(
            "ledger "
                + url
                + " of destination '"
                + destination
                + "' still had pages after "
                + MAX_PAGES);
      }
      JsonNode body = fetch(cursor);
      for (Confirmation c : entries(body)) {
        byOperation.merge(
            c.operationId(),
            c,
            (a, b) ->
                new Confirmation(
                    a.operationId(),
                    destination,
                    a.confirmedAt().isBefore(b.confirmedAt()) ? a.confirmedAt() : b.confirmedAt(),
                    a.appliedCount() + b.appliedCount(),
                    a.source()));
      }
      JsonNode next = body.get("next");
      if (next == null || next.isNull()) {
        break;
      }
      Instant nextCursor = instant(next, "next");
      if (!nextCursor.isAfter(cursor)) {
        throw new ConfirmationSourceException(
            "ledger "
                + url
                + " of destination '"
                + destination
                + "' answered next="
                + nextCursor
                + ", not after since="
                + cursor);
      }
      cursor = nextCursor;
    }
    return store.upsertConfirmations(new ArrayList<>(byOperation.values()));
  }

  private JsonNode fetch(Instant since) {
    URI page =
        URI.create(
            url
                + (url.getRawQuery() == null ? "?" : "&")
                + "since="
                + URLEncoder.encode(since.toString(), StandardCharsets.UTF_8)
                + "&limit="
                + PAGE_SIZE);
    HttpRequest request =
        HttpRequest.newBuilder(page)
            .timeout(requestTimeout)
            .header("Accept", "application/json")
            .GET()
            .build();
    HttpResponse<String> response;
    try {
      response = client.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new ConfirmationSourceException(
          "ledger of destination '" + destination + "': GET " + page + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConfirmationSourceException(
          "ledger of destination '" + destination + "': interrupted", e);
    }
    if (response.statusCode() != 200) {
      String text = response.body();
      throw new ConfirmationSourceException(
          "ledger of destination '"
              + destination
              + "': GET "
              + page
              + " answered HTTP "
              + response.statusCode()
              + ": "
              + (text.length() > 300 ? text.substring(0, 300) + "…" : text));
    }
    try {
      JsonNode body = JSON.readTree(response.body());
      if (body == null || !body.isObject() || !body.path("items").isArray()) {
        throw new ConfirmationSourceException(
            "ledger of destination '"
                + destination
                + "': GET "
                + page
                + " did not answer an object with an items array");
      }
      return body;
    } catch (IOException e) {
      throw new ConfirmationSourceException(
          "ledger of destination '"
              + destination
              + "': GET "
              + page
              + " answered invalid JSON: "
              + e.getMessage(),
          e);
    }
  }

  private List<Confirmation> entries(JsonNode body) {
    List<Confirmation> out = new ArrayList<>();
    for (JsonNode item : body.get("items")) {
      JsonNode dest = item.get("destination");
      if (dest != null && !dest.isNull() && !destination.equals(dest.asText())) {
        continue;
      }
      JsonNode op = item.get("operationId");
      if (op == null || !op.isTextual() || op.asText().isBlank()) {
        throw new ConfirmationSourceException(
            "ledger of destination '" + destination + "': an entry has no operationId: " + item);
      }
      int applied = item.path("appliedCount").asInt(1);
      if (applied < 1) {
        continue; // listed but not applied (a ledger may record refused deliveries)
      }
      out.add(
          new Confirmation(
              op.asText(),
              destination,
              instant(item.get("appliedAt"), "appliedAt"),
              applied,
              ReconciliationSettings.HTTP_LEDGER));
    }
    return out;
  }

  private Instant instant(JsonNode node, String field) {
    if (node == null || !node.isTextual()) {
      throw new ConfirmationSourceException(
          "ledger of destination '"
              + destination
              + "': "
              + field
              + " is not an ISO-8601 instant: "
              + node);
    }
    try {
      return Instant.parse(node.asText());
    } catch (DateTimeParseException e) {
      throw new ConfirmationSourceException(
          "ledger of destination '"
              + destination
              + "': "
              + field
              + " is not an ISO-8601 instant: "
              + node,
          e);
    }
  }
}
