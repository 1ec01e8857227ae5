package dev.outboxrelay.relay.bench;

import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.relay.sink.MessageSink;
import dev.outboxrelay.relay.sink.SinkResult;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The benchmark's sink: accepts every job at once (no network, no work), so what is measured is the
 * relay and the database. Records the first receipt time of each message id, every receipt (for the
 * duplicate check across processes), and whether jobs of one ordering key arrived in id order.
 */
final class RecordingSink implements MessageSink {
  private static final SinkResult DELIVERED = new SinkResult.Delivered("bench no-op");

  private final Map<Long, Long> firstReceiptNanos = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<Long> receipts = new ConcurrentLinkedQueue<>();
  private final Map<String, Long> lastIdByKey = new ConcurrentHashMap<>();
  private final AtomicLong duplicates = new AtomicLong();
  private final AtomicLong orderViolations = new AtomicLong();

  @Override
  public CompletionStage<SinkResult> deliver(ClaimedJob m) {
    return MessageSink.answered(record(m));
  }

  /** Records the receipt of {@code m} and answers delivered. */
  SinkResult record(ClaimedJob m) {
    long now = System.nanoTime();
    receipts.add(m.id());
    if (firstReceiptNanos.putIfAbsent(m.id(), now) != null) {
      duplicates.incrementAndGet();
    }
    if (m.orderingKey() != null) {
      lastIdByKey.merge(
          m.orderingKey(),
          m.id(),
          (previous, id) -> {
            if (id < previous) {
              orderViolations.incrementAndGet();
            }
            return Math.max(previous, id);
          });
    }
    return DELIVERED;
  }

  int distinct() {
    return firstReceiptNanos.size();
  }

  /** {@link System#nanoTime()} at the first receipt of {@code id}, or null. */
  Long receivedAt(long id) {
    return firstReceiptNanos.get(id);
  }

  /** Every receipt in arrival order, repeats included. */
  Iterable<Long> receipts() {
    return receipts;
  }

  long duplicates() {
    return duplicates.get();
  }

  long orderViolations() {
    return orderViolations.get();
  }
}
