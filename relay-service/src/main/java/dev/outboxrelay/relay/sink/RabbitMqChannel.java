package dev.outboxrelay.relay.sink;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.function.Consumer;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

/** The SmallRye emitter of the {@value RabbitMqSink#CHANNEL} channel, handed to every RabbitMqSink. */
@ApplicationScoped
public class RabbitMqChannel implements Consumer<Message<String>> {
  @Inject
  @Channel(RabbitMqSink.CHANNEL)
  @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 1024)
  Emitter<String> emitter;

  @Override
  public void accept(Message<String> message) {
    emitter.send(message);
  }
}
