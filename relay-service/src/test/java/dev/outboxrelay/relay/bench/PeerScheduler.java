package dev.outboxrelay.relay.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import io.agroal.api.AgroalDataSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The peer of the {@code drain}: db-scheduler draining one-time no-op tasks, all due now, from its
 * own {@code scheduled_tasks} table in a schema beside the bench's, with its lock-and-fetch poll
 * ({@value #THREADS} threads, {@code pollUsingLockAndFetch(4.0, 20.0)}) and a pool of the relay's
 * size. The clock runs from the scheduler's start until its table is empty; every task must have
 * run exactly once.
 */
final class PeerScheduler {
  static final String SCHEMA = "bench_peer";
  static final int THREADS = 20;
  static final double LOWER_LIMIT = 4.0;
  static final double UPPER_LIMIT = 20.0;
  private static final int SCHEDULE_BATCH = 1_000;

  /** One run: {@code duplicates} and {@code missed} count tasks run more than once and never. */
  record Result(
      int tasks,
      double seconds,
      double jobsPerS,
      long executions,
      long duplicates,
      long missed,
      long left,
      double hostCpuCores) {}

  private PeerScheduler() {}

  static Result drain(BenchDatabase db, int tasks, Duration cap) throws Exception {
    String url = db.freshPeerSchema(SCHEMA);
    AtomicIntegerArray runs = new AtomicIntegerArray(tasks);
    AtomicInteger executions = new AtomicInteger();
    OneTimeTask<Void> task =
        Tasks.oneTime("bench-noop")
            .execute(
                (instance, context) -> {
                  runs.incrementAndGet(Integer.parseInt(instance.getId()));
                  executions.incrementAndGet();
                });
    try (AgroalDataSource pool =
        BenchDatabase.pool(url, db.user(), BenchDatabase.RELAY_POOL_MAX_SIZE)) {
      SchedulerClient client = SchedulerClient.Builder.create(pool, task).build();
      Instant due = Instant.now().minusSeconds(1);
      for (int from = 0; from < tasks; from += SCHEDULE_BATCH) {
        List<TaskInstance<?>> batch = new ArrayList<>(SCHEDULE_BATCH);
        for (int i = from; i < Math.min(tasks, from + SCHEDULE_BATCH); i++) {
          batch.add(task.instance(String.valueOf(i)));
        }
        client.scheduleBatch(batch, due);
      }
      db.execute("ANALYZE " + SCHEMA + ".scheduled_tasks");
      String remaining = "SELECT COUNT(*) FROM " + SCHEMA + ".scheduled_tasks";
      if (db.count(remaining) != tasks) {
        throw new IllegalStateException(
            "scheduled " + db.count(remaining) + " of " + tasks + " tasks");
      }
      Scheduler scheduler =
          Scheduler.create(pool, task)
              .threads(THREADS)
              .pollUsingLockAndFetch(LOWER_LIMIT, UPPER_LIMIT)
              .shutdownMaxWait(Duration.ofSeconds(5))
              .build();
      double host0 = HostStats.hostBusySeconds();
      long t0 = System.nanoTime();
      long deadline = t0 + cap.toNanos();
      scheduler.start();
      while (executions.get() < tasks && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      // A task's row goes in its completion, after it ran: done when the table is empty.
      long left = db.count(remaining);
      while (left > 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
        left = db.count(remaining);
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      double host = HostStats.hostBusySeconds() - host0;
      scheduler.stop();
      long duplicates = 0;
      long missed = 0;
      for (int i = 0; i < tasks; i++) {
        int n = runs.get(i);
        if (n == 0) {
          missed++;
        } else {
          duplicates += n - 1;
        }
      }
      return new Result(
          tasks,
          seconds,
          (tasks - left) / seconds,
          executions.get(),
          duplicates,
          missed,
          left,
          host / seconds);
    }
  }
}
