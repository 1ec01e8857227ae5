/**
 * The one shape of the relay's background services (docs/design.md "Background services"): a {@link
 * BackgroundService} is one pass ({@code runOnce()}, answering a {@link Pass}), and a {@link
 * ServiceRunner} owns its thread, its schedule, the back-off after a failed pass, skipping passes
 * while its dependency is DOWN, and reporting every pass to the dependency's {@link
 * dev.outboxrelay.relay.state.StateChangeLog}. Depends only on {@code state}.
 */
package dev.outboxrelay.relay.background;
