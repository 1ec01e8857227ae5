-- No statement seeks on deliver_after since V6 (the claim walks ix_outbox_message_head), and the
-- backlog gauges range over state IN ('R', 'W') on ix_outbox_message_ready (state, id), so
-- ix_outbox_message_due (state, deliver_after, id) goes: one index entry less per enqueue and
-- per transition (see the PostgreSQL script and docs/performance.md "Fewer indexes (V8)").
DROP INDEX ix_outbox_message_due ON outbox_message;
