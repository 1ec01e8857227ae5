package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.OutboxMessage;

/** A validated message with its headers already serialised to JSON (null when none). */
public record NewMessage(OutboxMessage message, String headersJson) {}
