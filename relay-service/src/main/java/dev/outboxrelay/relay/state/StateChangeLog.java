package dev.outboxrelay.relay.state;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import org.jboss.logging.Logger;

/**
 * The up/down state of one dependency (a source's database, a destination's sink), logged the way
 * an operator wants to read it: one line when it goes DOWN (with the reason), one line when it is
 * UP again (with how long it was down), and while it stays down a reminder at most every {@code
 * reminderInterval}. Never a stack trace: callers report every success and failure, and most of
 * those reports log nothing. When it goes DOWN and UP is a {@link Trigger}'s call: for a database
 * DOWN at the first failure and UP at the first success ({@link #consecutive}); for a destination a
 * failure rate over a window ({@link FailureRateWindow}), so that a few retried deliveries among
 * many do not make it flap. Thread-safe.
 */
public final class StateChangeLog {
  /** Where lines go: the relay's log, or a test's list. */
  @FunctionalInterface
  public interface Lines {
    void write(Logger.Level level, String line);

    static Lines of(Logger log) {
      return (level, line) -> log.log(level, line);
    }
  }

  /**
   * A snapshot. {@code reason}: the latest failure while DOWN, else null; {@code since}: when the
   * current state began (null while UP since start).
   */
  public record Status(boolean up, String reason, Instant since, long failures) {}

  private final String subject;
  private final Lines lines;
  private final Clock clock;
  private final Duration reminderInterval;
  private final Trigger trigger;

  private boolean up = true;
  private int consecutiveFailures;
  private long failuresWhileDown;
  private String reason;
  private Instant since;
  private Instant lastLine;

  /**
   * Decides, from each call's outcome, when the dependency changes state. Called under the log's
   * lock, with every outcome in the order reported.
   */
  public interface Trigger {
    /** Records a failure at {@code now}; true when the dependency is (still) to be DOWN. */
    boolean failed(Instant now);

    /** Records a success at {@code now}; true when the dependency is (again) to be UP. */
    boolean succeeded(Instant now);

    /**
     * Asked while DOWN when the state is read, with no new outcome: true when what was recorded so
     * far, seen at {@code now}, says UP (a window's failures have aged out after the last call
     * succeeded). Without it a dependency that recovered and then got no more calls would stay DOWN
     * for ever. Default: only outcomes change the state.
     */
    default boolean recoveredBy(Instant now) {
      return false;
    }
  }

  /** DOWN after {@code failures} failures in a row (at least 1), UP at the first success. */
  public static Trigger consecutive(int failures) {
    if (failures < 1) {
      throw new IllegalArgumentException("failuresToDown must be at least 1, was " + failures);
    }
    return new Trigger() {
      private int inARow;

      @Override
      public boolean failed(Instant now) {
        return ++inARow >= failures;
      }

      @Override
      public boolean succeeded(Instant now) {
        inARow = 0;
        return true;
      }
    };
  }

  /**
   * @param subject what is up or down, as it starts a log line, e.g. {@code source 'orders'
   *     database}
   * @param failuresToDown consecutive failures that make it DOWN (at least 1)
   */
  public StateChangeLog(
      String subject, Lines lines, Clock clock, Duration reminderInterval, int failuresToDown) {
    this(subject, lines, clock, reminderInterval, consecutive(failuresToDown));
  }

  /**
   * @param trigger when it goes DOWN and UP again
   */
  public StateChangeLog(
      String subject, Lines lines, Clock clock, Duration reminderInterval, Trigger trigger) {
    if (reminderInterval.isNegative() || reminderInterval.isZero()) {
      throw new IllegalArgumentException(
          "outbox.relay.outage-reminder-interval must be positive, was " + reminderInterval);
    }
    this.subject = Objects.requireNonNull(subject, "subject");
    this.lines = Objects.requireNonNull(lines, "lines");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.reminderInterval = reminderInterval;
    this.trigger = Objects.requireNonNull(trigger, "trigger");
  }

  /**
   * The reminder interval of {@link #logging}: {@code outbox.relay.outage-reminder-interval}'s
   * default.
   */
  public static final Duration DEFAULT_REMINDER_INTERVAL = Duration.ofMinutes(1);

  /**
   * A state that only logs, to {@code log}: DOWN at the first failure, UP at the first success, a
   * reminder every {@link #DEFAULT_REMINDER_INTERVAL}. What a service reports to when nobody
   * watches its dependency (a test, the benchmark), so that reporting is never optional.
   */
  public static StateChangeLog logging(String subject, Logger log) {
    return new StateChangeLog(
        subject, Lines.of(log), Clock.systemUTC(), DEFAULT_REMINDER_INTERVAL, 1);
  }

  /** A call that needed the dependency worked: UP (logged when it was DOWN). */
  public void success() {
    success(clock.instant());
  }

  /**
   * A call that started at {@code callStarted} ({@link #now()} before it) worked. While DOWN, a
   * call that started before the outage was noticed is no evidence of recovery (it may have
   * finished on a connection the outage had not reached yet): it changes nothing, so an outage's
   * first moments do not log DOWN, UP, DOWN.
   */
  public synchronized void success(Instant callStarted) {
    if (!up && callStarted.isBefore(since)) {
      return;
    }
    consecutiveFailures = 0;
    Instant now = clock.instant();
    boolean upAgain = trigger.succeeded(now);
    if (up || !upAgain) {
      return;
    }
    upAgain(now);
  }

  private void upAgain(Instant now) {
    lines.write(
        Logger.Level.INFO,
        String.format(
            Locale.ROOT,
            "%s UP again after %s DOWN (%d failed call(s)" + " meanwhile; last: %s)",
            subject,
            human(Duration.between(since, now)),
            failuresWhileDown,
            reason));
    up = true;
    reason = null;
    since = now;
    lastLine = now;
    failuresWhileDown = 0;
  }

  /** A call that needed the dependency failed for {@code why} (one line, no stack trace). */
  public synchronized void failure(String why) {
    Instant now = clock.instant();
    String r = why == null || why.isBlank() ? "(no message)" : why.strip();
    consecutiveFailures++;
    boolean down = trigger.failed(now);
    if (up) {
      if (!down) {
        return;
      }
      up = false;
      since = now;
      reason = r;
      failuresWhileDown = consecutiveFailures;
      lastLine = now;
      lines.write(
          Logger.Level.WARN,
          String.format(
              Locale.ROOT,
              "%s DOWN: %s (logged again when UP, reminder" + " every %s while DOWN)",
              subject,
              r,
              human(reminderInterval)));
      return;
    }
    failuresWhileDown++;
    reason = r;
    if (Duration.between(lastLine, now).compareTo(reminderInterval) >= 0) {
      lastLine = now;
      lines.write(
          Logger.Level.WARN,
          String.format(
              Locale.ROOT,
              "%s still DOWN after %s (%d failed call(s)): %s",
              subject,
              human(Duration.between(since, now)),
              failuresWhileDown,
              r));
    }
  }

  /** This log's clock: what a caller passes to {@link #success(Instant)}. */
  public Instant now() {
    return clock.instant();
  }

  public synchronized Status status() {
    recheck();
    return new Status(up, reason, since, up ? consecutiveFailures : failuresWhileDown);
  }

  public synchronized boolean up() {
    recheck();
    return up;
  }

  /** While DOWN, asks the trigger whether time alone (no new call) has made it UP. */
  private void recheck() {
    if (!up) {
      Instant now = clock.instant();
      if (trigger.recoveredBy(now)) {
        upAgain(now);
      }
    }
  }

  /**
   * 1 while UP, 0 while DOWN: the {@code outbox_source_up} / {@code outbox_destination_up} gauges.
   */
  public double upValue() {
    return up() ? 1 : 0;
  }

  /**
   * One line for a failure: the exception's message and, when it adds something, its root cause's
   * (a store exception names the operation, the driver's cause says why: "connection refused").
   */
  public static String describe(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String top = String.valueOf(e.getMessage());
    String cause = root.getMessage();
    return root == e || cause == null || top.contains(cause) ? top : top + ": " + cause;
  }

  /** {@code 850ms}, {@code 12.3s}, {@code 4m05s}, {@code 2h03m}. */
  static String human(Duration d) {
    long ms = d.toMillis();
    if (ms < 1000) {
      return ms + "ms";
    }
    if (ms < 60_000) {
      return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
    }
    long s = ms / 1000;
    if (s < 3600) {
      return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
    }
    return String.format(Locale.ROOT, "%dh%02dm", s / 3600, (s % 3600) / 60);
  }
}
