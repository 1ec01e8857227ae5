package dev.outboxrelay.outbox;

import static dev.outboxrelay.outbox.testing.TestDatabases.HTTP_BILLING;
import static dev.outboxrelay.outbox.testing.TestDatabases.KAFKA_ORDERS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bad input is rejected before anything is written, with an {@link InvalidMessageException} naming
 * the column (docs/design.md "Bad input"). Most cases need no database; the "nothing written" check
 * runs each case through {@link Outbox#enqueue} on in-memory H2.
 */
class MessageValidationTest {
  /** Small on purpose, so that the payload limit is easy to cross. */
  private static final int MAX_PAYLOAD_BYTES = 64;

  private static final OutboxConfig CONFIG =
      OutboxConfig.builder()
          .destinations(HTTP_BILLING, KAFKA_ORDERS)
          .maxPayloadBytes(MAX_PAYLOAD_BYTES)
          .build();

  private final MessageValidator validator = new MessageValidator(CONFIG);

  /** One rejected message: the column {@code field()} must name and a fragment of the message. */
  record BadInput(String name, OutboxMessage message, String field, String expected) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<BadInput> badInputs() {
    return Stream.of(
        new BadInput(
            "missing operation id",
            valid().operationId(null).build(),
            "operation_id",
            "is required"),
        new BadInput(
            "blank operation id",
            valid().operationId("   ").build(),
            "operation_id",
            "is required"),
        new BadInput(
            "operation id of 201 characters",
            valid().operationId("o".repeat(201)).build(),
            "operation_id",
            "is 201 characters long; the limit is 200"),
        new BadInput(
            "operation id with a NUL",
            valid().operationId("order-1\u0000").build(),
            "operation_id",
            "character U+0000 (NULL) at position 8 is not allowed"),
        new BadInput(
            "operation id with a newline",
            valid().operationId("order-1\nx").build(),
            "operation_id",
            "character U+000A (LINE FEED (LF)) at position 8"),
        new BadInput(
            "operation id with a leading space",
            valid().operationId(" order-1").build(),
            "operation_id",
            "character U+0020 (SPACE) at position 1 is white space at the start"),
        new BadInput(
            "operation id with a trailing space",
            valid().operationId("order-1 ").build(),
            "operation_id",
            "character U+0020 (SPACE) at position 8 is white space at the end"),
        new BadInput(
            "operation id with a tab",
            valid().operationId("order\t1").build(),
            "operation_id",
            "character U+0009 (CHARACTER TABULATION) at position 6"),
        new BadInput(
            "operation id with DEL",
            valid().operationId("order\u007f1").build(),
            "operation_id",
            "character U+007F (DELETE) at position 6"),
        new BadInput(
            "operation id with a Latin-1 letter",
            valid().operationId("latin1-\u00e4").build(),
            "operation_id",
            "character U+00E4 (LATIN SMALL LETTER A WITH DIAERESIS) at position 8 is not allowed:"
                + " an operation ID is 1 to 200 printable ASCII characters (U+0020 to U+007E, no space at"
                + " either end), as an HTTP Idempotency-Key, an AMQP message-id and a Kafka header carry them"
                + " byte-for-byte"),
        new BadInput(
            "operation id with an emoji, counted as one character",
            valid().operationId("bestellung-\uD83D\uDE00-\u00e4").build(),
            "operation_id",
            "character U+1F600 (GRINNING FACE) at position 12"),
        new BadInput(
            "operation id with a line separator",
            valid().operationId("a\u2028b").build(),
            "operation_id",
            "character U+2028 (LINE SEPARATOR) at position 2"),
        new BadInput(
            "operation id with a lone surrogate",
            valid().operationId("a\uD800b").build(),
            "operation_id",
            "character U+D800 (a lone surrogate, no Unicode character) at position 2"),
        new BadInput(
            "operation id with a trailing lone low surrogate",
            valid().operationId("ab\uDC00").build(),
            "operation_id",
            "character U+DC00 (a lone surrogate, no Unicode character) at position 3"),
        new BadInput(
            "operation id of 201 non-ASCII characters: the character is named first",
            valid().operationId("\u00e9".repeat(201)).build(),
            "operation_id",
            "U+00E9"),
        new BadInput(
            "missing destination", valid().destination(null).build(), "destination", "is required"),
        new BadInput(
            "unknown destination",
            valid().destination("http:biling").build(),
            "destination",
            "'http:biling' is not a configured destination; known: [http:billing, kafka:orders]"),
        new BadInput(
            "missing content type",
            valid().contentType(null).build(),
            "content_type",
            "is required"),
        new BadInput(
            "content type of 101 characters",
            valid().contentType("t/" + "x".repeat(99)).build(),
            "content_type",
            "the limit is 100"),
        new BadInput(
            "content type with non-ASCII parameters",
            valid().contentType("text/plain; x=\u00e4\uD83D\uDE00").build(),
            "content_type",
            "character U+00E4 (LATIN SMALL LETTER A WITH DIAERESIS) at position 15 is not allowed: a content"
                + " type is 1 to 100 printable ASCII characters"),
        new BadInput(
            "content type with a tab",
            valid().contentType("text/plain;\tx=1").build(),
            "content_type",
            "character U+0009 (CHARACTER TABULATION) at position 12"),
        new BadInput(
            "content type with a trailing space",
            valid().contentType("text/plain ").build(),
            "content_type",
            "at position 11 is white space at the end"),
        new BadInput("missing payload", valid().payload(null).build(), "payload", "is required"),
        new BadInput(
            "payload over the limit",
            text("a".repeat(MAX_PAYLOAD_BYTES + 1)),
            "payload",
            "is 65 bytes; the limit is 64 bytes"),
        new BadInput(
            "payload over the limit in UTF-8 bytes, not characters",
            text("é".repeat(33)),
            "payload",
            "is 66 bytes; the limit is 64 bytes"),
        new BadInput(
            "invalid JSON for application/json",
            valid().payload("{\"order\":").build(),
            "payload",
            "is not valid JSON for content_type application/json"),
        new BadInput(
            "invalid JSON for application/json with parameters",
            valid().contentType("application/json; charset=utf-8").payload("{order: 1}").build(),
            "payload",
            "is not valid JSON for content_type application/json; charset=utf-8"),
        new BadInput(
            "invalid JSON for application/problem+json",
            valid().contentType("application/problem+json").payload("<problem/>").build(),
            "payload",
            "is not valid JSON for content_type application/problem+json"),
        new BadInput(
            "trailing garbage after JSON",
            valid().payload("{\"order\":1} trailing").build(),
            "payload",
            "is not valid JSON"),
        new BadInput(
            "two JSON documents",
            valid().payload("{\"a\":1}{\"b\":2}").build(),
            "payload",
            "is not valid JSON"),
        new BadInput(
            "empty payload for application/json", valid().payload("").build(), "payload", "JSON"),
        new BadInput(
            "ordering key of 201 characters",
            valid().orderingKey("k".repeat(201)).build(),
            "ordering_key",
            "is 201 characters long; the limit is 200"),
        new BadInput(
            "blank ordering key", valid().orderingKey(" ").build(), "ordering_key", "is required"),
        new BadInput(
            "ordering key with a lone surrogate",
            valid().orderingKey("customer-\uD800").build(),
            "ordering_key",
            "character U+D800 (a lone surrogate, no Unicode character) at position 10"),
        new BadInput(
            "payload with a lone surrogate",
            text("caf\u00e9 \uD83D\uDE00 \uDC00"),
            "payload",
            "character U+DC00 (a lone surrogate, no Unicode character) at position 8 is not allowed"),
        new BadInput(
            "header name with a space",
            valid().header("X Tenant", "acme").build(),
            "headers",
            "name 'X Tenant': character U+0020 (SPACE) at position 2 is not allowed: a header name is 1 to 100"
                + " HTTP token characters"),
        new BadInput(
            "header name with a colon",
            valid().header("X-Tenant:", "acme").build(),
            "headers",
            "name 'X-Tenant:': character U+003A (COLON) at position 9 is not allowed"),
        new BadInput(
            "header name with a Latin-1 letter",
            valid().header("X-M\u00fcller", "acme").build(),
            "headers",
            "name 'X-M\u00fcller': character U+00FC (LATIN SMALL LETTER U WITH DIAERESIS) at position 4"),
        new BadInput(
            "header name of 101 characters",
            valid().header("h".repeat(101), "acme").build(),
            "headers",
            "is not a valid header name (1-100 token characters)"),
        new BadInput(
            "empty header name",
            valid().header("", "acme").build(),
            "headers",
            "is not a valid header name"),
        new BadInput(
            "header value with a newline",
            valid().header("X-Tenant", "acme\r\nX-Evil: 1").build(),
            "headers",
            "value of 'X-Tenant': character U+000D (CARRIAGE RETURN (CR)) at position 5 is not allowed"),
        new BadInput(
            "header value with DEL",
            valid().header("X-Tenant", "a\u007fb").build(),
            "headers",
            "value of 'X-Tenant': character U+007F (DELETE) at position 2 is not allowed: a header value is"
                + " printable ASCII (U+0020 to U+007E) and tab, neither at either end: an HTTP field value"
                + " (RFC 9110)"),
        new BadInput(
            "header value with a Latin-1 letter",
            valid().header("X-Name", "Zo\u00eb").build(),
            "headers",
            "value of 'X-Name': character U+00EB (LATIN SMALL LETTER E WITH DIAERESIS) at position 3"),
        new BadInput(
            "header value with an emoji",
            valid().header("X-Mood", "\uD83D\uDE00").build(),
            "headers",
            "value of 'X-Mood': character U+1F600 (GRINNING FACE) at position 1"),
        new BadInput(
            "header value with a lone surrogate",
            valid().header("X-Mood", "a\uDBFF").build(),
            "headers",
            "value of 'X-Mood': character U+DBFF (a lone surrogate, no Unicode character) at position 2"),
        new BadInput(
            "header value with a leading space",
            valid().header("X-Tenant", " acme").build(),
            "headers",
            "value of 'X-Tenant': character U+0020 (SPACE) at position 1 is white space at the start"),
        new BadInput(
            "header value with a trailing tab",
            valid().header("X-Tenant", "acme\t").build(),
            "headers",
            "value of 'X-Tenant': character U+0009 (CHARACTER TABULATION) at position 5 is white space at the end"),
        new BadInput(
            "missing header value",
            valid().header("X-Tenant", null).build(),
            "headers",
            "value of 'X-Tenant' is missing"),
        new BadInput(
            "malformed traceparent",
            valid().header("traceparent", "00-abc-def-01").build(),
            "headers",
            "value of 'traceparent' is not a W3C traceparent"),
        new BadInput(
            "all-zero trace id in traceparent",
            valid().header("Traceparent", "00-" + "0".repeat(32) + "-00f067aa0ba902b7-01").build(),
            "headers",
            "is not a W3C traceparent"),
        new BadInput(
            "tracestate without traceparent",
            valid().header("tracestate", "rojo=00f067aa0ba902b7").build(),
            "headers",
            "'tracestate' needs a 'traceparent' beside it"),
        new BadInput(
            "negative deliverAfter",
            valid().deliverAfter(Duration.ofSeconds(-1)).build(),
            "deliver_after",
            "must not be negative"),
        new BadInput(
            "deliverAfter one millisecond over five years",
            valid().deliverAfter(OutboxConfig.MAX_DELIVER_AFTER.plusMillis(1)).build(),
            "deliver_after",
            "delay PT43920H0.001S is over the limit of 1830 days (five years, OutboxConfig.MAX_DELIVER_AFTER)"),
        new BadInput(
            "deliverAfter of a million years",
            valid().deliverAfter(Duration.ofDays(365_250_000)).build(),
            "deliver_after",
            "is over the limit of 1830 days"),
        new BadInput(
            "deliverAfter of Long.MAX_VALUE seconds",
            valid().deliverAfter(Duration.ofSeconds(Long.MAX_VALUE)).build(),
            "deliver_after",
            "is over the limit of 1830 days"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badInputs")
  void rejectsBadInputNamingTheColumn(BadInput bad) {
    InvalidMessageException e =
        assertThrows(InvalidMessageException.class, () -> validator.validate(bad.message()));
    assertEquals(bad.field(), e.field());
    assertTrue(e.getMessage().startsWith(bad.field() + ": "), e.getMessage());
    assertTrue(e.getMessage().contains(bad.expected()), "message: " + e.getMessage());
  }

  @Test
  void thePayloadLimitErrorNamesTheSettingAndTheByReferencePattern() {
    InvalidMessageException e =
        assertThrows(
            InvalidMessageException.class,
            () -> validator.validate(text("x".repeat(MAX_PAYLOAD_BYTES + 1))));
    assertEquals("payload", e.field());
    for (String expected :
        List.of(
            "is 65 bytes",
            "the limit is 64 bytes",
            "outbox.producer.max-payload-bytes",
            "outbox_payload",
            "blob store",
            "reference",
            "Large payloads")) {
      assertTrue(e.getMessage().contains(expected), expected + " in: " + e.getMessage());
    }
  }

  @Test
  void countsUtf8BytesWithoutEncoding() {
    for (String s : List.of("", "a", "é", "✓", "😀", "Zoë ✓ 東京 😀", "\uD800 lone", "x\uDC00")) {
      assertEquals(
          s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length,
          MessageValidator.utf8Length(s),
          s);
    }
  }

  @Test
  void rejectsAMissingMessage() {
    InvalidMessageException e =
        assertThrows(InvalidMessageException.class, () -> validator.validate(null));
    assertEquals("message", e.field());
    assertEquals("message: is required", e.getMessage());
  }

  @Test
  void acceptsNonJsonContentForNonJsonTypes() {
    assertNull(validator.validate(valid().contentType("text/plain").payload("not { json").build()));
    assertNull(
        validator.validate(
            valid().contentType("application/xml").payload("<order id='1'/>").build()));
    assertNull(validator.validate(valid().contentType("text/plain").payload("").build()));
  }

  @Test
  void acceptsValidJsonForEveryJsonType() {
    assertNull(validator.validate(valid().payload("[1, 2, 3]").build()));
    assertNull(
        validator.validate(
            valid()
                .contentType("Application/JSON; charset=UTF-8")
                .payload("{\"a\":\"b\"}")
                .build()));
    assertNull(
        validator.validate(
            valid()
                .contentType("application/problem+json")
                .payload("{\"type\":\"about:blank\",\"status\":400}")
                .build()));
  }

  @Test
  void acceptsValuesExactlyAtTheirLimits() {
    assertNull(
        validator.validate(
            valid()
                .operationId("o".repeat(200))
                .orderingKey("k".repeat(200))
                .contentType("text/plain")
                .payload("a".repeat(MAX_PAYLOAD_BYTES))
                .build()));
    assertNull(validator.validate(valid().deliverAfter(Duration.ZERO).build()));
  }

  @Test
  void acceptsEveryPrintableAsciiCharacterWhereSinksCarryItUnchanged() {
    StringBuilder ascii = new StringBuilder();
    for (char ch = 0x21; ch <= 0x7e; ch++) {
      ascii.append(ch).append(ch == 'a' ? " " : "");
    }
    String json =
        validator.validate(
            valid()
                .operationId(ascii.toString())
                .contentType("text/" + ascii)
                .payload("x")
                .header("X-All", ascii + "\t" + ascii)
                .header("X-Empty", "")
                .build());
    assertTrue(json.contains("\"X-Empty\":\"\""), json);
    assertNull(
        validator.validate(
            valid()
                .operationId("x".repeat(200))
                .contentType("t/" + "x".repeat(98))
                .payload("x")
                .build()),
        "the limits count characters, which are bytes here");
    assertNull(
        validator.validate(valid().orderingKey("Kunde M\u00fcller \uD83D\uDE00").build()),
        "an ordering key is no header: any text but control characters and lone surrogates");
    assertNull(
        validator.validate(text("Zo\u00eb \u2713 \uD83D\uDE00")),
        "a payload is UTF-8: any character");
    assertNull(validator.validate(valid().deliverAfter(OutboxConfig.MAX_DELIVER_AFTER).build()));
  }

  @Test
  void aRefusedCharacterCarriesItsCodePointAndPosition() {
    InvalidCharacterException e =
        assertThrows(
            InvalidCharacterException.class,
            () ->
                validator.validate(valid().operationId("bestellung-\u00e4-\uD83D\uDE00").build()));
    assertEquals("operation_id", e.field());
    assertEquals(0xE4, e.codePoint());
    assertEquals(12, e.position());
    InvalidCharacterException emoji =
        assertThrows(
            InvalidCharacterException.class,
            () -> validator.validate(valid().header("X-Mood", "ok \uD83D\uDE00").build()));
    assertEquals(0x1F600, emoji.codePoint());
    assertEquals(4, emoji.position());
  }

  @Test
  void returnsTheHeadersAsAJsonObject() {
    String json =
        validator.validate(valid().header("X-Tenant", "acme").header("trace", "a\tb").build());
    assertEquals(
        "{\"X-Tenant\":\"acme\",\"trace\":\"a\\tb\"}", json, "a tab is allowed in a value");
    assertNull(validator.validate(valid().build()), "no headers: null column");
  }

  @Test
  void rejectsHeadersTooLargeForTheColumn() {
    OutboxMessage.Builder m = valid();
    for (int i = 0; i < 100; i++) {
      m.header("X-Header-" + i, "v".repeat(80));
    }
    InvalidMessageException e =
        assertThrows(InvalidMessageException.class, () -> validator.validate(m.build()));
    assertEquals("headers", e.field());
    assertTrue(e.getMessage().contains("the limit is 8192"), e.getMessage());
  }

  /** Each rejected message leaves the table empty, whatever the connection does afterwards. */
  @Nested
  class NothingWritten {
    private static final DataSource H2 = TestDatabases.h2();
    private final Outbox outbox = new Outbox(CONFIG);

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.outboxrelay.outbox.MessageValidationTest#badInputs")
    void enqueueOfBadInputWritesNothing(BadInput bad) throws Exception {
      try (Connection c = H2.getConnection()) {
        c.setAutoCommit(false);
        assertThrows(InvalidMessageException.class, () -> outbox.enqueue(c, bad.message()));
        c.commit();
      }
      assertEquals(0, TestDatabases.countMessages(H2));
    }
  }

  @Nested
  class Config {
    @Test
    void rejectsNoDestinations() {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> OutboxConfig.builder().build());
      assertEquals("destinations: at least one destination must be configured", e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"http billing", "", "-leading-dash", "http/billing", "kafka:orders\n"})
    void rejectsABadDestinationName(String name) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> OutboxConfig.builder().destinations(HTTP_BILLING, name).build());
      assertEquals(
          "destinations: '" + name + "' is not a valid destination name (letters, digits, . _ : -)",
          e.getMessage());
    }

    @Test
    void rejectsADestinationNameOverTheColumnWidth() {
      String name = "d".repeat(201);
      assertThrows(
          IllegalArgumentException.class, () -> OutboxConfig.builder().destinations(name).build());
      assertEquals(
          java.util.Set.of("d".repeat(200)),
          OutboxConfig.builder().destinations("d".repeat(200)).build().destinations());
    }

    @Test
    void rejectsANonPositivePayloadLimit() {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> OutboxConfig.builder().destinations(HTTP_BILLING).maxPayloadBytes(0).build());
      assertEquals("maxPayloadBytes: must be positive, was 0", e.getMessage());
    }

    @Test
    void rejectsAnInlineThresholdThatIsNotPositiveOrOverTheLimit() {
      IllegalArgumentException zero =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  OutboxConfig.builder().destinations(HTTP_BILLING).inlinePayloadBytes(0).build());
      assertEquals("inlinePayloadBytes: must be positive, was 0", zero.getMessage());
      IllegalArgumentException over =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  OutboxConfig.builder()
                      .destinations(HTTP_BILLING)
                      .maxPayloadBytes(1000)
                      .inlinePayloadBytes(1001)
                      .build());
      assertEquals(
          "inlinePayloadBytes: must not exceed maxPayloadBytes (1000), was 1001",
          over.getMessage());
    }

    @Test
    void theDefaultInlineThresholdIsCappedAtASmallerLimit() {
      assertEquals(64, CONFIG.inlinePayloadBytes(), "max 64: everything fits inline");
      assertEquals(
          1000,
          OutboxConfig.builder()
              .destinations(HTTP_BILLING)
              .maxPayloadBytes(1000)
              .inlinePayloadBytes(1000)
              .build()
              .inlinePayloadBytes());
    }

    @Test
    void hasVisibleDefaults() {
      OutboxConfig config =
          OutboxConfig.builder().destinations("rabbitmq:emails", "a.b_c-d:1").build();
      assertEquals(OutboxConfig.DEFAULT_MAX_PAYLOAD_BYTES, config.maxPayloadBytes());
      assertEquals(1024 * 1024, config.maxPayloadBytes());
      assertEquals(OutboxConfig.DEFAULT_INLINE_PAYLOAD_BYTES, config.inlinePayloadBytes());
      assertEquals(64 * 1024, config.inlinePayloadBytes());
      assertNull(config.dialect(), "detected from the connection");
      assertEquals(java.util.Set.of("rabbitmq:emails", "a.b_c-d:1"), config.destinations());
    }
  }

  // ---- helpers -------------------------------------------------------------------------------

  /** A message every check accepts; each case breaks one field. */
  private static OutboxMessage.Builder valid() {
    return OutboxMessage.builder()
        .operationId("order-1/billing")
        .destination(HTTP_BILLING)
        .payload("{}");
  }

  private static OutboxMessage text(String payload) {
    return valid().contentType("text/plain; charset=utf-8").payload(payload).build();
  }
}
