package dev.outboxrelay.relay.web;

/**
 * The relay's roles. The same names work with every identity provider: embedded users from config
 * (the default, HTTP Basic) or OIDC tokens (see docs/operations.md "Admin API").
 */
public final class Roles {
  private Roles() {}

  /** Reads jobs, attempts and stats. */
  public static final String VIEWER = "outbox-viewer";

  /** Acts on jobs (replay, cancel, bulk replay, reconciliation runs); may also read. */
  public static final String OPERATOR = "outbox-operator";
}
