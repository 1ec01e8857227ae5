package dev.outboxrelay.relay.sink;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.outboxrelay.relay.config.RelayConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;

/**
 * The relay's one AMQP connection to RabbitMQ (official Java client), shared by every RabbitMQ
 * destination; each {@link RabbitMqSink} opens its own channel on it. Opened at the first RabbitMQ
 * delivery and, once lost (broker restart, {@code rabbitmqctl close_connection}, a network cut),
 * opened anew by the next delivery that needs it: no automatic recovery, whose replayed channels
 * would lose the correlation of in-flight publisher confirms. While the broker does not answer, a
 * new attempt to connect is made at most every {@link #RECONNECT_PAUSE}; the deliveries in between
 * fail at once with the last reason (retries, in the relay's backoff).
 *
 * <p>Thread-safe.
 */
public final class RabbitMqConnection implements AutoCloseable {
  /** The least time between two attempts to connect. */
  static final Duration RECONNECT_PAUSE = Duration.ofSeconds(1);

  private final ConnectionFactory factory;
  private final String name;
  private final MeterRegistry registry;

  /**
   * Whether sinks declare their exchange on each new channel ({@code
   * outbox.rabbitmq.declare-exchanges}).
   */
  final boolean declareExchanges;

  /** The type of the exchanges they declare. */
  final String exchangeType;

  /** The default exchange of a destination that names none. */
  final String defaultExchange;

  private Connection connection;
  private IOException lastFailure;
  private long lastAttemptNanos;
  private boolean closed;

  RabbitMqConnection(
      ConnectionFactory factory,
      String name,
      MeterRegistry registry,
      boolean declareExchanges,
      String exchangeType,
      String defaultExchange) {
    this.factory = factory;
    this.name = name;
    this.registry = registry;
    this.declareExchanges = declareExchanges;
    this.exchangeType = exchangeType;
    this.defaultExchange = defaultExchange;
  }

  /**
   * From {@code outbox.rabbitmq.*}. Nothing is dialled until the first delivery.
   *
   * @param name the connection's name as the broker shows it ({@code rabbitmqctl list_connections
   *     client_properties}, the management UI)
   */
  public static RabbitMqConnection of(
      RelayConfig.RabbitMq settings, MeterRegistry registry, String name) {
    ConnectionFactory f = new ConnectionFactory();
    f.setHost(settings.host());
    f.setPort(settings.port());
    f.setUsername(settings.username());
    f.setPassword(settings.password());
    f.setVirtualHost(settings.virtualHost());
    if (settings.tls()) {
      try {
        f.useSslProtocol(SSLContext.getDefault());
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException(
            "outbox.rabbitmq.tls: no default TLS context: " + e.getMessage(), e);
      }
      f.enableHostnameVerification();
    }
    f.setAutomaticRecoveryEnabled(false);
    f.setTopologyRecoveryEnabled(false);
    f.setConnectionTimeout(5_000);
    f.setHandshakeTimeout(5_000);
    f.setRequestedHeartbeat(30);
    if (!settings.exchangeType().matches("topic|direct|fanout|headers")) {
      throw new IllegalArgumentException(
          "outbox.rabbitmq.exchange-type must be topic, direct, fanout or headers,"
              + " was '"
              + settings.exchangeType()
              + "'");
    }
    return new RabbitMqConnection(
        f,
        name,
        registry,
        settings.declareExchanges(),
        settings.exchangeType(),
        settings.exchange());
  }

  /** For tests and tools without a broker: every RabbitMQ delivery fails as a retry. */
  public static RabbitMqConnection none() {
    ConnectionFactory unusable =
        new ConnectionFactory() {
          @Override
          public Connection newConnection(String connectionName) throws IOException {
            throw new IOException("no RabbitMQ connection in this registry");
          }
        };
    return new RabbitMqConnection(unusable, "none", null, false, "topic", "outbox");
  }

  /** The open connection, opening one if there is none. */
  synchronized Connection open() throws IOException {
    if (closed) {
      throw new IOException("the relay is shutting down");
    }
    if (connection != null && connection.isOpen()) {
      return connection;
    }
    long now = System.nanoTime();
    if (lastFailure != null && now - lastAttemptNanos < RECONNECT_PAUSE.toNanos()) {
      throw lastFailure;
    }
    lastAttemptNanos = now;
    try {
      connection = factory.newConnection(name);
      lastFailure = null;
      return connection;
    } catch (IOException e) {
      lastFailure =
          new IOException(
              "cannot connect to RabbitMQ at "
                  + factory.getHost()
                  + ":"
                  + factory.getPort()
                  + ": "
                  + describe(e),
              e);
      throw lastFailure;
    } catch (TimeoutException e) {
      lastFailure =
          new IOException(
              "cannot connect to RabbitMQ at "
                  + factory.getHost()
                  + ":"
                  + factory.getPort()
                  + ": timed out",
              e);
      throw lastFailure;
    }
  }

  /** The counter of unroutable messages of {@code destination}, or null without a registry. */
  Counter unroutableCounter(String destination) {
    return registry == null
        ? null
        : Counter.builder("outbox.rabbitmq.unroutable")
            .description(
                "Messages the broker returned as unroutable (no queue bound for the routing key)")
            .tag("destination", destination)
            .register(registry);
  }

  private static String describe(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (connection != null && connection.isOpen()) {
      try {
        connection.close(2_000);
      } catch (IOException | RuntimeException e) {
        // closing on shutdown: nothing to do about it
      }
    }
  }
}
