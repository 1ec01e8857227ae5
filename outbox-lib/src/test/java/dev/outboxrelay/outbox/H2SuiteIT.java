package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.inbox.InboxContractTest;
import dev.outboxrelay.outbox.store.ConfiguredNamesContractTest;
import dev.outboxrelay.outbox.store.OutboxAdminStoreContractTest;
import dev.outboxrelay.outbox.store.OutboxStoreContractTest;
import dev.outboxrelay.outbox.store.ReconciliationStoreContractTest;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.H2Dialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.junit.jupiter.api.Nested;

/** Every store contract on H2, each nested class on an in-memory database of its own. */
class H2SuiteIT {
  private static final Map<Class<?>, DataSource> DATABASES = new ConcurrentHashMap<>();

  /** The in-memory database of {@code test}'s nested class, created on first use. */
  private static DataSource databaseOf(Object test) {
    return DATABASES.computeIfAbsent(test.getClass(), c -> TestDatabases.h2());
  }

  /** The claim/complete contract. */
  @Nested
  class Store extends OutboxStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return databaseOf(this);
    }

    @Override
    protected Class<? extends Dialect> expectedDialect() {
      return H2Dialect.class;
    }
  }

  /** The store contract on an outbox with configured names, next to the default-named one. */
  @Nested
  class ConfiguredNames extends ConfiguredNamesContractTest {
    @Override
    protected DataSource dataSource() {
      return preparedOnce(TestDatabases::h2);
    }

    @Override
    protected Class<? extends Dialect> expectedDialect() {
      return H2Dialect.class;
    }
  }

  /** The store's operator statements. */
  @Nested
  class AdminStore extends OutboxAdminStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return databaseOf(this);
    }
  }

  /** The reconciliation SQL. */
  @Nested
  class Reconciliation extends ReconciliationStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return databaseOf(this);
    }
  }

  /** Enqueue in the caller's transaction. */
  @Nested
  class Enqueue extends OutboxEnqueueContractTest {
    @Override
    protected DataSource dataSource() {
      return databaseOf(this);
    }
  }

  /** Large payloads by reference. */
  @Nested
  class LargePayload extends LargePayloadContractTest {
    @Override
    protected DataSource dataSource() {
      return databaseOf(this);
    }
  }

  /** The inbox contract. */
  @Nested
  class Inbox extends InboxContractTest {
    @Override
    protected DataSource dataSource() {
      return databaseOf(this);
    }
  }
}
