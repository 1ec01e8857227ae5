package dev.outboxrelay.outbox.testing;

import java.time.Duration;

/**
 * The only places where a test lets time pass on purpose: the span itself is what is tested, never
 * a guess at how long a condition takes (wait for a condition with Awaitility or a signal,
 * docs/testing.md "Waiting in tests"). A name says which of the two reasons it is.
 */
public final class TimeSpans {
  private TimeSpans() {}

  /**
   * A sink, receiver or worker that takes its time on purpose: the slowness is the behaviour under
   * test.
   */
  public static void simulateWork(Duration work) throws InterruptedException {
    Thread.sleep(work.toMillis());
  }

  /**
   * A span of time that the test is about: a fault's schedule (a kill every n seconds), an outage
   * sampled through, the idle window that is measured.
   */
  public static void letPass(Duration span) throws InterruptedException {
    Thread.sleep(span.toMillis());
  }
}
