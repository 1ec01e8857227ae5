/**
 * The operators' console, {@code GET /console}: an overview (jobs by state per source and
 * destination, backlog age, deliveries in the last minute by outcome, dead jobs in the last hour,
 * up/down states, the latest reconciliation counts), a jobs list filtered from the address, a job's
 * page (payload, redacted headers, attempts, the job holding its ordering key back) and the
 * operator's actions.
 *
 * <p>The page is one static HTML file with its own script and styles (no resource from outside the
 * relay); it reads JSON with the caller's login and acts only through the admin API's existing
 * endpoints ({@code POST /admin/messages/{id}/replay}, {@code .../cancel}, {@code POST
 * /admin/messages/replay}), so there is one implementation of every action and its refusals. What
 * the page needs and the admin API did not answer is read here, under {@code /admin/console/*},
 * with the admin API's roles. Nothing here changes state.
 */
package dev.outboxrelay.relay.console;
