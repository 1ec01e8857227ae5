package dev.outboxrelay.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class BenchArgsTest {

  @Test
  void defaultsToAFullPostgresqlRunOfEveryScenario() {
    BenchArgs a = BenchArgs.parse();
    assertEquals("postgresql", a.db());
    assertFalse(a.quick());
    assertFalse(a.relayRole());
    for (String s : BenchArgs.SCENARIOS) {
      assertTrue(a.runs(s), s);
    }
  }

  @Test
  void onlyRunsOneScenario() {
    BenchArgs a = BenchArgs.parse("--db", "h2", "--only", "idle", "--quick");
    assertEquals("h2", a.db());
    assertTrue(a.quick());
    assertTrue(a.runs("idle"));
    assertFalse(a.runs("drain"));
  }

  @Test
  void onlyRunsSeveralScenariosInTheirOwnOrder() {
    BenchArgs a = BenchArgs.parse("--only", "drain,peer", "--quick");
    assertTrue(a.runs("peer"));
    assertTrue(a.runs("drain"));
    assertFalse(a.runs("drain-http"));
    assertThrows(BenchArgs.UsageException.class, () -> BenchArgs.parse("--only", "drain,"));
    assertThrows(
        BenchArgs.UsageException.class, () -> BenchArgs.parse("--only", "drain,everything"));
  }

  @Test
  void relayRoleNeedsItsConnectionAndIdsFile() {
    BenchArgs a =
        BenchArgs.parse(
            "--role",
            "relay",
            "--jdbc-url",
            "jdbc:h2:mem:x",
            "--user",
            "sa",
            "--ids-file",
            "/tmp/ids");
    assertTrue(a.relayRole());
    assertEquals(Optional.of(Path.of("/tmp/ids")), a.idsFile());
    assertThrows(BenchArgs.UsageException.class, () -> BenchArgs.parse("--role", "relay"));
    assertThrows(BenchArgs.UsageException.class, () -> BenchArgs.parse("--user", "sa"));
  }

  @Test
  void refusesWhatItCannotRun() {
    assertThrows(BenchArgs.UsageException.class, () -> BenchArgs.parse("--db", "oracle"));
    assertThrows(BenchArgs.UsageException.class, () -> BenchArgs.parse("--only", "everything"));
    assertThrows(BenchArgs.UsageException.class, () -> BenchArgs.parse("--only"));
    assertThrows(BenchArgs.UsageException.class, () -> BenchArgs.parse("--db", "--quick"));
    assertThrows(BenchArgs.UsageException.class, () -> BenchArgs.parse("--fast"));
  }
}
