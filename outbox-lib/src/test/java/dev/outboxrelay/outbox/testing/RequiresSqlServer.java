package dev.outboxrelay.outbox.testing;

import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs a SQL Server test class only where a SQL Server is reachable ({@link
 * TestDatabases#sqlServerUnavailable()}). Elsewhere each test method is disabled with the reason,
 * so the reports list every SQL Server test by name as skipped, never as passed (disabling the
 * class instead would report one skipped class and hide the tests' names).
 */
public class RequiresSqlServer implements ExecutionCondition {
  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    if (context.getTestMethod().isEmpty()) {
      return ConditionEvaluationResult.enabled("SQL Server is checked per test");
    }
    Optional<String> unavailable = TestDatabases.sqlServerUnavailable();
    return unavailable.isPresent()
        ? ConditionEvaluationResult.disabled("SQL Server test skipped: " + unavailable.get())
        : ConditionEvaluationResult.enabled("SQL Server reachable");
  }
}
