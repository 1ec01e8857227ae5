/**
 * Signed webhooks: the relay signs each HTTP delivery with a per-destination secret and the
 * receiver checks it with {@link WebhookSignature#verify}. The signature covers a timestamp and the
 * exact body bytes, so a body changed in transit fails and a replayed old request is stale.
 */
package dev.outboxrelay.outbox.webhook;
