package dev.outboxrelay.outbox.store;

/**
 * An ordering key with dead jobs. A dead job does not block its key (the later jobs go on), so each
 * of these keys had at least one job skipped out of order: the operator decides whether to replay
 * it (delivered after the later ones) or leave it.
 *
 * @param firstDeadId the lowest id among the key's dead jobs
 */
public record DeadOrderingKey(String orderingKey, long deadCount, long firstDeadId) {}
