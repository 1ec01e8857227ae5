package dev.outboxrelay.relay.source;

import dev.outboxrelay.relay.background.Pass;
import dev.outboxrelay.relay.background.ServiceRunner;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The periodic passes a relay runs on every source's database, such as the fleet-locked retention
 * and reconciliation ticks (docs/design.md "Background services"): per source and pass, one {@link
 * ServiceRunner} reporting to the source's database state, the first pass at once, then one every
 * interval, none while the source is DOWN (its state already says why; the next pass tries again)
 * and nothing asked while its database has not answered since start-up. Thread-safe.
 */
public final class SourceSchedule implements AutoCloseable {
  /** One pass on a started source; answers its work in the service's unit, throws on failure. */
  @FunctionalInterface
  public interface SourcePass {
    long run(RelaySource source) throws Exception;
  }

  private final List<ServiceRunner> runners = new CopyOnWriteArrayList<>();

  /**
   * Starts {@code pass} on every source in {@code sources}, every {@code interval}.
   *
   * @param threadName the threads' name before the source's ({@code outbox-retention-})
   * @param failure how a failure line starts ({@code retention failed}), before the error
   */
  public void start(
      List<RelaySource> sources,
      String threadName,
      String failure,
      Duration interval,
      SourcePass pass) {
    for (RelaySource source : sources) {
      runners.add(
          new ServiceRunner(
                  threadName + source.name(),
                  failure,
                  () -> source.started() ? Pass.done(pass.run(source)) : Pass.idle(),
                  source.database())
              .every(interval)
              .firstAfter(Duration.ZERO)
              .skipWhileDown()
              .start());
    }
  }

  /** The runners started so far, in the order they were started. */
  public List<ServiceRunner> runners() {
    return runners;
  }

  /** Stops every runner (see {@link ServiceRunner#close()}). */
  @Override
  public void close() {
    runners.forEach(ServiceRunner::close);
  }
}
