package dev.outboxrelay.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BenchReportTest {

  @Test
  void linesAreKeyValuesWithTargetsCountedInTheSummary() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    BenchReport r = new BenchReport(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    r.line("drain")
        .put("jobs_per_s", 1234.56)
        .put("ratio", 0.8123)
        .put("note", "a b")
        .target("ratio>=0.7", true)
        .print();
    r.scenarioRan();
    r.line("idle").put("claims_per_s", Double.NaN).target("claims_per_s<=2", false).print();
    r.scenarioRan();
    r.summary("h2", true, 12.345);
    assertEquals(
        "BENCH drain jobs_per_s=1235 ratio=0.81 note=a_b target=ratio>=0.7 target_met=true\n"
            + "BENCH idle claims_per_s=n/a target=claims_per_s<=2 target_met=false\n"
            + "BENCH SUMMARY scenarios=2 targets_met=1/2 failed=0 db=h2 quick=true seconds=12.3\n",
        bytes.toString(StandardCharsets.UTF_8));
  }
}
