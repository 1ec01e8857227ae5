package dev.outboxrelay.relay.sink;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.Method;
import com.rabbitmq.client.ReturnListener;
import com.rabbitmq.client.ShutdownSignalException;
import dev.outboxrelay.outbox.store.ClaimedJob;
import io.micrometer.core.instrument.Counter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Publishes a job as one persistent AMQP message with the official RabbitMQ Java client: exchange
 * and routing key per destination, AMQP {@code message-id} = the operation ID (consumers
 * deduplicate on it), content type the job's, headers {@code operation-id}, {@code
 * outbox-message-id}, {@code outbox-attempt} plus the job's own.
 *
 * <p>Each destination has a channel of its own on the relay's {@link RabbitMqConnection}, in
 * confirm mode, and publishes with {@code mandatory}. A publication is answered by the broker's
 * answer to that very message (the confirm listener, correlated by the channel's publish sequence
 * number; no thread waits for it):
 *
 * <ul>
 *   <li>ack, not returned: {@link SinkResult.Delivered};
 *   <li>returned ({@code basic.return}, which the broker sends before the ack): no queue took it, a
 *       retry {@value #UNROUTABLE} with {@code unroutable: exchange X, routing key Y}, counted in
 *       {@code outbox_rabbitmq_unroutable_total{destination}};
 *   <li>nack: a retry with the broker's refusal;
 *   <li>the channel closed by the broker (e.g. {@code 404 NOT_FOUND - no exchange}) or the
 *       connection lost: a retry with the broker's reason, at once (not after a timeout); a message
 *       too large for the broker is permanent. The dead channel is dropped and the next delivery
 *       opens a new one, so confirms work again without restarting the relay;
 *   <li>no answer within the request timeout: a retry (the message may still arrive: consumers
 *       deduplicate on {@code message-id}).
 * </ul>
 *
 * The SmallRye RabbitMQ connector could not do this: it publishes without {@code mandatory}, so an
 * unroutable message is confirmed and dropped, and after a channel error its confirms did not come
 * back until a restart.
 *
 * <p>Publications of one destination are serialized on its channel, by its one publish thread (a
 * channel is not to be shared by concurrent publishers), so one key's jobs, delivered in id order,
 * reach a queue in that order; confirms are awaited by nobody: they complete the answers.
 */
public final class RabbitMqSink implements MessageSink {
  private static final Logger LOG = Logger.getLogger(RabbitMqSink.class);

  /** AMQP delivery mode 2: the broker writes the message to disk (with a durable queue). */
  static final int PERSISTENT = 2;

  /** Error class of a message no queue was bound for. */
  public static final String UNROUTABLE = "RabbitMqUnroutable";

  /** Error class of a channel or connection the broker closed, or that could not be opened. */
  public static final String CHANNEL_CLOSED = "RabbitMqChannelClosed";

  /** Error class of a nack. */
  public static final String NACK = "RabbitMqNack";

  /** Error class of no confirm within the request timeout. */
  public static final String CONFIRM_TIMEOUT = "RabbitMqConfirmTimeout";

  private final String destination;
  private final String exchange;
  private final String routingKey;
  private final Duration confirmTimeout;
  private final RabbitMqConnection connection;
  private final Counter unroutable;
  private final Object publishLock = new Object();

  /**
   * Publishes this destination's messages one after the other, in the order they were handed in.
   */
  private final ExecutorService publishThread;

  /**
   * The destination's current channel; replaced when it closed. Guarded by {@link #publishLock}.
   */
  private ConfirmChannel current;

  public RabbitMqSink(
      String destination,
      String exchange,
      String routingKey,
      Duration confirmTimeout,
      RabbitMqConnection connection) {
    this.destination = destination;
    this.exchange = exchange;
    this.routingKey = routingKey;
    this.confirmTimeout = confirmTimeout;
    this.connection = connection;
    this.unroutable = connection.unroutableCounter(destination);
    this.publishThread = SendThread.named("outbox-rabbitmq-publish-" + destination);
  }

  public String exchange() {
    return exchange;
  }

  public String routingKey() {
    return routingKey;
  }

  private String target() {
    return "rabbitmq exchange '" + exchange + "' routing key '" + routingKey + "'";
  }

  /**
   * Publishes on this destination's publish thread (publishing and opening a channel are blocking
   * calls of the client) and answers when the broker's confirm, nack or channel close arrives, on
   * the client's connection thread: no thread waits per message.
   */
  @Override
  public CompletionStage<SinkResult> deliver(ClaimedJob m) {
    Map<String, Object> headers = new LinkedHashMap<>(SinkHeaders.of(m));
    headers.remove("content-type"); // an AMQP property of its own
    AMQP.BasicProperties props =
        new AMQP.BasicProperties.Builder()
            .messageId(m.operationId())
            .contentType(m.contentType())
            .deliveryMode(PERSISTENT)
            .timestamp(new Date())
            .headers(headers)
            .build();
    byte[] body = m.payload().getBytes(StandardCharsets.UTF_8);
    CompletableFuture<SinkResult> answer = new CompletableFuture<>();
    publishThread.execute(
        () -> {
          Pending pending;
          try {
            pending = publish(props, body, m.id() + "/" + m.attemptNo(), answer);
          } catch (IOException | RuntimeException e) {
            answer.complete(
                new SinkResult.RetryLater(
                    Optional.empty(),
                    CHANNEL_CLOSED,
                    target() + ": " + (e.getMessage() == null ? e.toString() : e.getMessage()),
                    null));
            return;
          }
          // The timer is cancelled when the broker answers first.
          SinkResult timedOut =
              new SinkResult.RetryLater(
                  Optional.empty(),
                  CONFIRM_TIMEOUT,
                  target() + ": no publisher confirm within " + confirmTimeout,
                  null);
          answer
              .completeOnTimeout(timedOut, confirmTimeout.toMillis(), TimeUnit.MILLISECONDS)
              .thenAccept(
                  r -> {
                    if (r == timedOut) {
                      pending.owner.forget(pending);
                    }
                  });
        });
    return answer;
  }

  private Pending publish(
      AMQP.BasicProperties props, byte[] body, String key, CompletableFuture<SinkResult> answer)
      throws IOException {
    synchronized (publishLock) {
      ConfirmChannel ch = current;
      if (ch == null || !ch.channel.isOpen()) {
        current = null;
        ch = open();
        current = ch;
      }
      return ch.publish(props, body, key, answer);
    }
  }

  private ConfirmChannel open() throws IOException {
    Channel channel = connection.open().createChannel();
    if (channel == null) {
      throw new IOException("the broker allows no more channels on this connection");
    }
    ConfirmChannel ch = new ConfirmChannel(channel);
    channel.addShutdownListener(ch::closed);
    channel.addReturnListener(ch);
    channel.addConfirmListener(ch);
    try {
      channel.confirmSelect();
      if (connection.declareExchanges) {
        channel.exchangeDeclare(exchange, connection.exchangeType, true);
      }
    } catch (IOException e) {
      throw new IOException(reason(e), e);
    }
    return ch;
  }

  /** The broker's words when it closed the channel or connection, else the exception's. */
  static String reason(Throwable e) {
    Throwable t = e;
    while (t != null && !(t instanceof ShutdownSignalException)) {
      t = t.getCause();
    }
    if (t instanceof ShutdownSignalException sse) {
      return describe(sse);
    }
    return e.getMessage() == null ? e.toString() : e.getMessage();
  }

  private static String describe(ShutdownSignalException sse) {
    Method m = sse.getReason();
    if (m instanceof AMQP.Channel.Close c) {
      return "the broker closed the channel: " + c.getReplyCode() + " " + c.getReplyText();
    }
    if (m instanceof AMQP.Connection.Close c) {
      return (sse.isInitiatedByApplication()
              ? "the connection was closed: "
              : "the broker closed the connection: ")
          + c.getReplyCode()
          + " "
          + c.getReplyText();
    }
    return "the connection was lost: "
        + (sse.getCause() != null ? sse.getCause().toString() : sse.getMessage());
  }

  /** Whether the broker refused the message for good (too large for it), not for now. */
  private static boolean permanent(ShutdownSignalException sse) {
    return sse.getReason() instanceof AMQP.Channel.Close c
        && c.getReplyCode() == AMQP.PRECONDITION_FAILED
        && c.getReplyText() != null
        && c.getReplyText().contains("message size");
  }

  /** One publication waiting for the broker's answer. */
  private static final class Pending {
    final long seqNo;
    final String key;
    final ConfirmChannel owner;
    final CompletableFuture<SinkResult> answer;

    /** Set by a return, which the broker sends before the ack. */
    volatile String returned;

    Pending(long seqNo, String key, ConfirmChannel owner, CompletableFuture<SinkResult> answer) {
      this.seqNo = seqNo;
      this.key = key;
      this.owner = owner;
      this.answer = answer;
    }
  }

  /** A channel in confirm mode and the publications waiting on it. */
  private final class ConfirmChannel implements ConfirmListener, ReturnListener {
    final Channel channel;
    final ConcurrentNavigableMap<Long, Pending> bySeqNo = new ConcurrentSkipListMap<>();

    /**
     * By message id and attempt ({@code 42/3}): a return carries the headers, not the sequence
     * number.
     */
    final Map<String, Pending> byKey = new ConcurrentHashMap<>();

    ConfirmChannel(Channel channel) {
      this.channel = channel;
    }

    Pending publish(
        AMQP.BasicProperties props, byte[] body, String key, CompletableFuture<SinkResult> answer)
        throws IOException {
      Pending p = new Pending(channel.getNextPublishSeqNo(), key, this, answer);
      bySeqNo.put(p.seqNo, p);
      byKey.put(key, p);
      try {
        channel.basicPublish(exchange, routingKey, true, props, body);
      } catch (IOException | RuntimeException e) {
        forget(p);
        throw new IOException(reason(e), e);
      }
      return p;
    }

    void forget(Pending p) {
      bySeqNo.remove(p.seqNo, p);
      byKey.remove(p.key, p);
    }

    @Override
    public void handleReturn(
        int replyCode,
        String replyText,
        String exch,
        String key,
        AMQP.BasicProperties properties,
        byte[] body) {
      Map<String, Object> h = properties.getHeaders();
      if (h == null) {
        return;
      }
      Pending p = byKey.get(h.get("outbox-message-id") + "/" + h.get("outbox-attempt"));
      if (p != null) {
        p.returned =
            "unroutable: exchange "
                + exch
                + ", routing key "
                + key
                + " (the broker returned it: "
                + replyCode
                + " "
                + replyText
                + "; bind a queue to the exchange for this routing key, or give"
                + " the exchange an alternate exchange)";
      }
    }

    @Override
    public void handleAck(long seqNo, boolean multiple) {
      settle(seqNo, multiple, null);
    }

    @Override
    public void handleNack(long seqNo, boolean multiple) {
      settle(seqNo, multiple, "the broker refused the message (nack)");
    }

    private void settle(long seqNo, boolean multiple, String nack) {
      Map<Long, Pending> done = multiple ? bySeqNo.headMap(seqNo, true) : single(seqNo);
      for (Pending p : done.values().toArray(Pending[]::new)) {
        forget(p);
        if (nack != null) {
          p.answer.complete(
              new SinkResult.RetryLater(Optional.empty(), NACK, target() + ": " + nack, null));
        } else if (p.returned != null) {
          if (unroutable != null) {
            unroutable.increment();
          }
          p.answer.complete(
              new SinkResult.RetryLater(Optional.empty(), UNROUTABLE, p.returned, null));
        } else {
          p.answer.complete(new SinkResult.Delivered(target() + " confirmed"));
        }
      }
    }

    private Map<Long, Pending> single(long seqNo) {
      Pending p = bySeqNo.get(seqNo);
      return p == null ? Map.of() : Map.of(seqNo, p);
    }

    /** The channel closed: every publication still waiting fails now with the broker's reason. */
    void closed(ShutdownSignalException cause) {
      String why = describe(cause);
      boolean permanent = permanent(cause);
      if (!bySeqNo.isEmpty()) {
        LOG.debugf(
            "destination '%s': channel closed with %d publication(s) unconfirmed: %s",
            destination, bySeqNo.size(), why);
      }
      for (Pending p : bySeqNo.values().toArray(Pending[]::new)) {
        forget(p);
        p.answer.complete(
            permanent
                ? new SinkResult.PermanentFailure(CHANNEL_CLOSED, target() + ": " + why, null)
                : new SinkResult.RetryLater(
                    Optional.empty(), CHANNEL_CLOSED, target() + ": " + why, null));
      }
    }
  }
}
