-- The sink's dedup record moved to outbox-lib's inbox (outbox_inbox, migrated by the sink with
-- its own history table); the demo's own ledger table goes. demo_invoice stays: the business effect.
DROP TABLE demo_sink_ledger;
