package dev.outboxrelay.relay.lifecycle;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Guards against a concurrency the connection pool cannot serve (deliveries would time out). */
class PoolSizeCheckTest {
  @Test
  void defaultsFit() {
    assertDoesNotThrow(() -> RelayService.checkPoolSize(32, 48, "postgresql"));
    assertDoesNotThrow(() -> RelayService.checkPoolSize(44, 48, "postgresql"));
  }

  @Test
  void tooManyWorkersForThePoolFailsNamingBothKeys() {
    var e = assertThrows(IllegalArgumentException.class, () -> RelayService.checkPoolSize(45, 48, "h2"));
    assertTrue(e.getMessage().contains("outbox.relay.concurrency=45"), e.getMessage());
    assertTrue(e.getMessage().contains("quarkus.datasource.h2.jdbc.max-size is 48"), e.getMessage());
  }

  /** The PostgreSQL notification listener's connection comes on top; without it the relay polls. */
  @Test
  void theListenerRunsOnlyWithAConnectionToSpare() {
    assertTrue(RelayService.listenerFits(32, 48));
    assertTrue(RelayService.listenerFits(43, 48));
    assertTrue(!RelayService.listenerFits(44, 48), "44 + 4 fills the pool: the relay polls");
  }
}
