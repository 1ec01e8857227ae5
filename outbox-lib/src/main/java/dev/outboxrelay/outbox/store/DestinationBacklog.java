package dev.outboxrelay.outbox.store;

import java.time.Duration;

/**
 * One destination's waiting jobs, by the database clock (see {@link
 * OutboxStore#backlogByDestination()}).
 *
 * @param ready jobs in {@code R} that are due now or earlier
 * @param oldestReadyAge age of the destination's oldest undelivered job, as {@link
 *     OutboxStore#oldestReadyAge()} measures it for the whole table
 */
public record DestinationBacklog(long ready, Duration oldestReadyAge) {}
