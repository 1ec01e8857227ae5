/**
 * The admin API: list and inspect jobs with their attempts, replay dead jobs ({@code D → R}),
 * cancel ready ones ({@code R → D}), bulk-replay dead jobs by filter with a dry run, and stats
 * (counts per state and destination, dead jobs per error class, ordering keys that had a job
 * skipped).
 *
 * <p>Model: an operator action is a conditional update on the job's state, so it races safely with
 * relays and other operators: a replay only takes a {@code D} job, a cancel only an {@code R} one
 * (a {@code W} job is being sent and cannot be recalled), and a refused action (409) changed
 * nothing. A dead job never blocks its ordering key (the later jobs went on), so a replayed job is
 * delivered after them; the stats name the keys concerned. Input is validated strictly in {@link
 * AdminInput}; refusals are problem responses from {@code dev.outboxrelay.relay.web}.
 */
package dev.outboxrelay.relay.admin;
