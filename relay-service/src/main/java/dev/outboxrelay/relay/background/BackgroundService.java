package dev.outboxrelay.relay.background;

/**
 * A background service: one pass of its work, run again and again by a {@link ServiceRunner} (or
 * called directly, by a test or an operator's request). A pass does not sleep, loop for ever or
 * catch its dependency's errors to log them: it throws, and the runner reports the failure and
 * backs off.
 */
@FunctionalInterface
public interface BackgroundService {
  /** One pass; throws when the dependency failed (the next pass tries again). */
  Pass runOnce() throws Exception;
}
