/**
 * Maintenance: retention, deleting finished jobs once they are old (STYLE "maintenance").
 *
 * <p>Model. A pass ({@link RetentionService#retainOnce}) deletes {@code S} jobs sent, and {@code C}
 * jobs confirmed, longer than {@code outbox.retention.keep} ago by the database clock, in batches
 * of {@code batch-size}, each its own short transaction, until a batch deletes fewer than it asked
 * for or {@code max-per-pass} is reached. Attempts and out-of-band bodies go with their job (the
 * bodies by {@code ON DELETE CASCADE}, the attempts by the same transaction); {@code R}, {@code W}
 * and {@code D} jobs are never deleted.
 *
 * <p>One pass at a time across the fleet: a pass holds the {@code retention} row of {@code
 * outbox_lock} (a lease by the database clock, renewed after every batch, released at the end); a
 * relay that finds it held skips its tick. The schedule ({@link RetentionSchedule}) also skips a
 * tick when a pass ended on any relay less than half an interval ago, so a fleet runs about one
 * pass per interval.
 */
package dev.outboxrelay.relay.maintenance;
