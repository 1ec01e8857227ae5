package dev.outboxrelay.relay.sink;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.function.Consumer;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

/** The SmallRye emitter of the {@value KafkaSink#CHANNEL} channel, handed to every KafkaSink. */
@ApplicationScoped
public class KafkaChannel implements Consumer<Message<String>> {
  @Inject
  @Channel(KafkaSink.CHANNEL)
  @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 1024)
  Emitter<String> emitter;

  @Override
  public void accept(Message<String> message) {
    emitter.send(message);
  }

  /**
   * How long the producer may hold a record before it acknowledges or fails it for good: its
   * {@code max.block.ms} (waiting for metadata or buffer space in {@code send}) plus {@code
   * delivery.timeout.ms}, as configured on the channel (Kafka's defaults, 60 s and 120 s, when
   * unset).
   */
  public static Duration verdictWithin() {
    var config = ConfigProvider.getConfig();
    String prefix = "mp.messaging.outgoing." + KafkaSink.CHANNEL + ".";
    long maxBlock = config.getOptionalValue(prefix + "max.block.ms", Long.class).orElse(60_000L);
    long delivery = config.getOptionalValue(prefix + "delivery.timeout.ms", Long.class).orElse(120_000L);
    return Duration.ofMillis(maxBlock + delivery);
  }
}
