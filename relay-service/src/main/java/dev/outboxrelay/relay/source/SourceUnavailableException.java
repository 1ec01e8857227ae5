package dev.outboxrelay.relay.source;

/** A source whose database has not answered since start-up: its store does not exist yet. */
public class SourceUnavailableException extends IllegalStateException {
  private final String source;

  public SourceUnavailableException(String source, String reason) {
    super(
        "source '"
            + source
            + "' is not started: its database has not answered yet"
            + (reason == null ? "" : " (" + reason + ")"));
    this.source = source;
  }

  public String source() {
    return source;
  }
}
